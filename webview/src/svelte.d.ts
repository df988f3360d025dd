// tsc does not understand .svelte files; Vite compiles them. This gives imports a type.
declare module '*.svelte' {
  import type { Component } from 'svelte';
  const component: Component;
  export default component;
}
