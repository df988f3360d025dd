import type { ScopeRegistry, ViewSpec } from './registry';

export interface PromptSection {
  /** Sections shadow by name, like tools; `deployment:persona` is the persona slot. */
  name: string;
  text: string;
  /** Lower comes first; ties break by name, so assembly is stable. */
  order?: number;
}

export interface Persona {
  text: string;
  /** The persona is the whole system prompt. */
  complete?: boolean;
}

export const PERSONA_SECTION = 'deployment:persona';

/** Assemble the system prompt from a scoped view of sections, with an optional persona. */
export function assemblePrompt(sections: ScopeRegistry<PromptSection>, spec: ViewSpec, persona?: Persona): string {
  if (persona?.complete) return persona.text;
  const list = sections.view(spec);
  if (persona) {
    const i = list.findIndex((s) => s.name === PERSONA_SECTION);
    const entry = { name: PERSONA_SECTION, text: persona.text, order: i >= 0 ? list[i].order : 0 };
    if (i >= 0) list[i] = entry;
    else list.push(entry);
  }
  return list
    .sort((a, b) => (a.order ?? 100) - (b.order ?? 100) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((s) => s.text.trim())
    .filter(Boolean)
    .join('\n\n');
}

export const DEFAULT_SECTIONS: PromptSection[] = [
  {
    name: PERSONA_SECTION,
    order: 0,
    text: "You are Arbor, a careful coding agent working in the user's workspace. Use the tools to read before you change; make small, exact edits; say what you did.",
  },
  {
    name: 'deployment:tools',
    order: 10,
    text: "Paths are relative to the first workspace folder. Writes outside the workspace, and to .git, .vscode or Arbor settings, are refused or need the user's approval; when a tool refuses, explain the limit instead of working around it.",
  },
];
