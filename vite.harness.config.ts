import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

// The scripted-host harness (webview/dev/) for tests, benches and screenshots. It is not
// part of the extension: it lands in dist/webview-harness/ and loads the real bundle from
// ../webview/ at run time, so what it exercises is exactly what the extension ships.
export default defineConfig({
  root: here('./webview/dev'),
  base: './',
  publicDir: false,
  build: {
    outDir: here('./dist/webview-harness'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    rolldownOptions: {
      input: { index: here('./webview/dev/harness.html') },
    },
  },
});
