// One shared one-second tick for every elapsed-time label. The interval runs only while
// some rendered element reads `clock.now` (createSubscriber counts the readers), so an
// idle tree costs no timer at all.
import { createSubscriber } from 'svelte/reactivity';

let current = Date.now();
let running = false;

const subscribe = createSubscriber((update) => {
  running = true;
  current = Date.now();
  const timer = setInterval(() => {
    current = Date.now();
    update();
  }, 1000);
  return () => {
    running = false;
    clearInterval(timer);
  };
});

export const clock = {
  /** Epoch ms, re-read by effects once a second while any effect reads it. */
  get now(): number {
    subscribe();
    return running ? current : Date.now();
  },
};
