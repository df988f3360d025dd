import '@vscode/codicons/dist/codicon.css';
import './styles/base.css';
import { mount } from 'svelte';
import App from './App.svelte';
import { AppState } from './state/app.svelte';

const target = document.getElementById('app');
if (!target) throw new Error('Arbor webview: #app element missing from the host HTML');

// The CSP forbids inline scripts, so the host says which view this is in attributes:
// <body data-view="transcript" data-session="ID"> (or the same on #app). Default: the panel.
const attr = (name: string): string | undefined => target.dataset[name] ?? document.body.dataset[name] ?? undefined;
const view = attr('view') === 'transcript' ? 'transcript' : 'panel';
const session = attr('session') || undefined;

document.body.classList.add(`arbor-${view}`);

export default mount(App, { target, props: { app: new AppState(view, session) } });
