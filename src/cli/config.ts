import * as path from 'node:path';
import type { HarnessConfig } from '../core/harness';
import { autoApprove, neverApprove } from '../core/policy/approval';
import { oneOf, positiveInt, UsageError, type ParsedArgs } from './args';
import { remoteFromConfig } from './remote-config';

export const DEFAULT_BASE_URL = 'https://api.deepseek.com';
export const DEFAULT_MODEL = 'deepseek-chat';

/** API key from ARBOR_API_KEY, else DEEPSEEK_API_KEY / OPENAI_API_KEY. Local servers need none. */
export function apiKeyFor(baseURL: string, env: NodeJS.ProcessEnv): string {
  const key = env.ARBOR_API_KEY || env.DEEPSEEK_API_KEY || env.OPENAI_API_KEY;
  if (key) return key;
  if (/^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:|\/|$)/.test(baseURL)) return 'local';
  throw new UsageError(`No API key for ${baseURL}. Set ARBOR_API_KEY (or DEEPSEEK_API_KEY / OPENAI_API_KEY), or point --base-url at a local server.`);
}

export function storeDirOf(args: ParsedArgs, env: NodeJS.ProcessEnv): string {
  const s = args.options.get('store');
  if (typeof s === 'string') return path.resolve(s);
  if (env.ARBOR_STORE) return path.resolve(env.ARBOR_STORE);
  return path.resolve(workspaceOf(args), '.arbor', 'store');
}

export function workspaceOf(args: ParsedArgs): string {
  const w = args.options.get('workspace');
  return path.resolve(typeof w === 'string' ? w : process.cwd());
}

/** Everything `run` and `send` need, from flags and environment. */
export function harnessConfig(args: ParsedArgs, env: NodeJS.ProcessEnv): HarnessConfig {
  const baseURL = (args.options.get('base-url') as string | undefined) ?? env.ARBOR_BASE_URL ?? DEFAULT_BASE_URL;
  // Flags first, so a typo is reported before anything about keys or folders.
  const approval = oneOf('approval', args.options.get('approval'), ['never', 'auto'] as const, 'never');
  const sandbox = oneOf('sandbox', args.options.get('sandbox'), ['read-only', 'workspace-write', 'full-access'] as const, 'workspace-write');
  const maxTokens = positiveInt('max-tokens', args.options.get('max-tokens'));
  const timeoutMs = positiveInt('timeout', args.options.get('timeout'));
  const maxSteps = positiveInt('max-steps', args.options.get('max-steps'));
  const maxConcurrentChildren = positiveInt('max-children', args.options.get('max-children'));
  const remote = remoteFromConfig(args, env);
  return {
    storeDir: storeDirOf(args, env),
    workspace: [workspaceOf(args)],
    model: {
      baseURL,
      name: (args.options.get('model') as string | undefined) ?? env.ARBOR_MODEL ?? DEFAULT_MODEL,
      apiKey: apiKeyFor(baseURL, env),
      maxTokens,
      timeoutMs,
    },
    sandbox,
    approval: approval === 'auto' ? 'ask' : 'never',
    approvalPort: approval === 'auto' ? autoApprove : neverApprove,
    maxSteps,
    ...(maxConcurrentChildren !== undefined ? { maxConcurrentChildren } : {}),
    commands: { network: args.options.has('network'), ...(env.ARBOR_BWRAP ? { bwrapPath: env.ARBOR_BWRAP } : {}) },
    ...(remote ? { remote } : {}),
  };
}
