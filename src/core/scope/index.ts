export { assemblePrompt, DEFAULT_SECTIONS, PERSONA_SECTION, type Persona, type PromptSection } from './prompt';
export { GLOBAL, ScopeRegistry, type ViewSpec } from './registry';
