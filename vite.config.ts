import { fileURLToPath } from 'node:url';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vite';

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

// Builds the side-panel webview into dist/webview/index.{js,css}. The names are fixed
// (no hashes) because the host writes them into the webview HTML.
export default defineConfig({
  root: here('./webview'),
  base: './',
  publicDir: false,
  plugins: [
    svelte({
      configFile: false,
      compilerOptions: {
        runes: true,
        // Svelte's a11y checks cannot see inside custom elements: <vscode-button> and
        // <vscode-textarea> carry their own role, tabindex and keyboard handling.
        warningFilter: (w) => !(w.code.startsWith('a11y_') && /`<vscode-[a-z-]+>`/.test(w.message)),
      },
    }),
  ],
  build: {
    outDir: here('./dist/webview'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // One stylesheet and one script: the CSP admits exactly the script tag the host writes.
    cssCodeSplit: false,
    rolldownOptions: {
      input: here('./webview/src/main.ts'),
      output: {
        format: 'es',
        codeSplitting: false,
        entryFileNames: 'index.js',
        assetFileNames: (asset) => (asset.names.some((n) => n.endsWith('.css')) ? 'index.css' : 'assets/[name][extname]'),
      },
    },
  },
});
