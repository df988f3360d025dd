// tsc does not understand .svelte files; Vite compiles them. This gives imports a type.
declare module '*.svelte' {
  import type { Component } from 'svelte';

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  // biome-ignore lint/suspicious/noExplicitAny: the standard shim for .svelte modules (props vary per component)
  const component: Component<any>;
  export default component;
}

// Stylesheets are bundled by Vite into index.css.
declare module '*.css';
