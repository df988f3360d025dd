import { mount } from 'svelte';
import App from './App.svelte';

const target = document.getElementById('app');
if (!target) throw new Error('Arbor webview: #app element missing from the host HTML');

export default mount(App, { target });
