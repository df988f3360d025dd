import type { JsonSchema } from '../tools/tool';
import { SubagentDepthError, SubagentError, type SubagentProvider, type SubagentRequest } from './types';

const CAPABILITY_OF: [keyof SubagentRequest, keyof SubagentProvider['capabilities']][] = [
  ['outputSchema', 'outputSchema'],
  ['maxDepth', 'depthLimit'],
  ['toolFilter', 'toolFilter'],
  ['persona', 'persona'],
  ['agent', 'persona'],
];

/**
 * Every check of a start, in the contract's order, before anything is created:
 * unknown provider → unsupported mode → undeclared capability → bad maxDepth → bad outputSchema (or one for a
 * continuable child) → depth.
 */
export function checkStart(
  providers: ReadonlyMap<string, SubagentProvider>,
  providerName: string,
  request: SubagentRequest,
  parentDepth: number,
  deploymentMaxDepth: number,
  mode: 'one-shot' | 'continuable' = 'one-shot',
): { provider: SubagentProvider; depth: number } {
  const provider = providers.get(providerName);
  if (!provider) throw new SubagentError('UNKNOWN_PROVIDER', `Unknown subagent provider "${providerName}". Known: ${[...providers.keys()].join(', ')}.`);
  if (provider.modes && !provider.modes.includes(mode))
    throw new SubagentError(
      'NOT_CONTINUABLE',
      `Provider "${provider.name}" runs ${provider.modes.join(' or ')} children only; start it with mode 'wait' or 'background'.`,
    );
  for (const [field, cap] of CAPABILITY_OF) {
    if (request[field] !== undefined && !provider.capabilities[cap])
      throw new SubagentError('UNSUPPORTED_CAPABILITY', `Provider "${provider.name}" does not support ${field}; leave it out for this provider.`);
  }
  if (request.maxDepth !== undefined && !isDepth(request.maxDepth))
    throw new SubagentError('BAD_MAX_DEPTH', `maxDepth must be a non-negative integer, got ${JSON.stringify(request.maxDepth)}.`);
  if (request.outputSchema !== undefined && !isObjectSchema(request.outputSchema))
    throw new SubagentError('BAD_OUTPUT_SCHEMA', 'outputSchema must be a JSON schema of an object: {"type": "object", "properties": {...}}.');
  // A structured result is the one-shot child's answer to a waiting caller; a continuable
  // child has none (its settlement notice carries text): the value would go nowhere.
  if (request.outputSchema !== undefined && mode === 'continuable')
    throw new SubagentError(
      'BAD_OUTPUT_SCHEMA',
      "outputSchema works only for one-shot children (mode 'wait' or 'background'), whose caller receives the structured result. A continuable child answers in text: leave outputSchema out, or use mode 'wait'.",
    );
  if (typeof request.prompt !== 'string' || request.prompt.trim() === '') throw new SubagentError('BAD_REQUEST', 'A subagent needs a non-empty prompt.');
  const depth = parentDepth + 1;
  const max = Math.min(deploymentMaxDepth, request.maxDepth ?? Infinity);
  if (depth > max) throw new SubagentDepthError(depth, max);
  return { provider, depth };
}

export function isDepth(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function isObjectSchema(s: unknown): s is JsonSchema {
  if (typeof s !== 'object' || s === null || Array.isArray(s)) return false;
  const o = s as JsonSchema;
  if (o.type !== 'object') return false;
  if (o.properties !== undefined && (typeof o.properties !== 'object' || o.properties === null || Array.isArray(o.properties))) return false;
  if (o.required !== undefined && (!Array.isArray(o.required) || o.required.some((r) => typeof r !== 'string'))) return false;
  return true;
}
