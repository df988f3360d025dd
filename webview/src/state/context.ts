import { createContext } from 'svelte';
import type { AppState } from './app.svelte';

/**
 * The one `AppState` of a view, through Svelte's context: `App.svelte` provides it once and
 * every component that needs it asks (`appState()`), instead of a prop handed down through
 * every level.
 */
export const [appState, provideAppState] = createContext<AppState>();
