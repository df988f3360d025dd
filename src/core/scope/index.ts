export { ScopeRegistry, GLOBAL, type ViewSpec } from './registry';
export { assemblePrompt, DEFAULT_SECTIONS, PERSONA_SECTION, type PromptSection, type Persona } from './prompt';
