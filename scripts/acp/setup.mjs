#!/usr/bin/env node
// Installs, idempotently, the ACP tools the tests drive:
// - the third-party ACP client the `arbor acp` tests drive (acpx, pinned) into .tools/acp/;
// - the three real ACP agents the `acp` remote provider is tested against
//   (claude-agent-acp, codex-acp, and SDK 1.9.0 for its scripted example agent) into
//   .tools/acp-agents/ (docs/acp-agents-facts.md).
// Each is skipped when its stamp shows those exact versions, and checked after: acpx by its
// --version, the agents by their installed package.json files, so drift fails loudly.
// Their own folders: .tools/remote/ belongs to the remote-providers setup.
// Usage: node scripts/acp/setup.mjs   (npm run setup:acp; `npm test` runs it before mocha)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { acpAgents, acpAgentsBundled, acpAgentsDir, acpToolsDir, acpxEntry, acpxVersion } from './paths.mjs';

const stampFile = join(acpToolsDir, '.arbor-acp-stamp.json');
const stamp = (() => {
  try {
    return JSON.parse(readFileSync(stampFile, 'utf8'));
  } catch {
    return {};
  }
})();

if (stamp.acpx === acpxVersion && existsSync(acpxEntry)) {
  console.log(`[setup:acp] acpx@${acpxVersion} already in ${acpToolsDir}, skipping`);
} else {
  mkdirSync(acpToolsDir, { recursive: true });
  const pkg = join(acpToolsDir, 'package.json');
  if (!existsSync(pkg))
    writeFileSync(
      pkg,
      `${JSON.stringify({ name: 'arbor-acp-tools', private: true, description: 'ACP client for the arbor acp tests (written by scripts/acp/setup.mjs)' }, null, 2)}\n`,
    );
  console.log(`[setup:acp] $ npm install acpx@${acpxVersion}   (in ${acpToolsDir})`);
  const r = spawnSync('npm', ['install', '--save-exact', '--no-audit', '--no-fund', '--no-update-notifier', `acpx@${acpxVersion}`], {
    cwd: acpToolsDir,
    stdio: 'inherit',
  });
  if (r.status !== 0) {
    console.error(`[setup:acp] npm install acpx@${acpxVersion} failed (exit ${r.status ?? r.signal}); check the npm registry is reachable.`);
    process.exit(1);
  }
  writeFileSync(stampFile, `${JSON.stringify({ acpx: acpxVersion }, null, 2)}\n`);
}
const v = spawnSync(process.execPath, [acpxEntry, '--version'], { encoding: 'utf8', timeout: 30_000 });
const got = (v.stdout ?? '').trim();
if (!got.includes(acpxVersion)) {
  console.error(`[setup:acp] ${acpxEntry} --version says "${got}${v.stderr ?? ''}", expected ${acpxVersion}`);
  process.exit(1);
}
console.log(`[setup:acp] acpx ${got}`);

// ── the ACP agents ──────────────────────────────────────────────────────────────────────
const agentsStampFile = join(acpAgentsDir, '.arbor-acp-agents-stamp.json');
/** Every pinned package, name → version (the agents and what they bring along). */
const wanted = {
  ...Object.fromEntries(Object.values(acpAgents).map((a) => [a.pkg, a.version])),
  ...acpAgentsBundled,
};

/** The version in an installed package's package.json, or undefined when it is not there. */
function installedVersion(pkg) {
  try {
    return JSON.parse(readFileSync(join(acpAgentsDir, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}
const drift = () =>
  Object.entries(wanted)
    .filter(([pkg, v]) => installedVersion(pkg) !== v)
    .map(([pkg, v]) => `${pkg} is ${installedVersion(pkg) ?? 'missing'}, expected ${v}`);
const entriesMissing = () => Object.values(acpAgents).filter((a) => !existsSync(a.entry) || (a.bin && !existsSync(a.bin)));

/** Without what an outer `npm run` exported about itself (user settings such as the registry stay). */
function npmEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env))
    if (/^npm_(config_user_agent|config_local_prefix|lifecycle_|package_|command$)/i.test(key) || key === 'INIT_CWD') delete env[key];
  return env;
}

const agentsStamp = (() => {
  try {
    return JSON.parse(readFileSync(agentsStampFile, 'utf8'));
  } catch {
    return {};
  }
})();
const stamped = Object.entries(wanted).every(([pkg, v]) => agentsStamp[pkg] === v);
if (stamped && drift().length === 0 && entriesMissing().length === 0) {
  console.log(`[setup:acp] ACP agents already in ${acpAgentsDir}, skipping`);
} else if (drift().length === 0 && entriesMissing().length === 0) {
  // Installed by hand (or by an older setup) at exactly these versions: only the stamp is new.
  writeFileSync(agentsStampFile, `${JSON.stringify(wanted, null, 2)}\n`);
  console.log(`[setup:acp] ACP agents found at the pinned versions in ${acpAgentsDir}; stamped`);
} else {
  mkdirSync(acpAgentsDir, { recursive: true });
  // The whole manifest is ours: exact dependencies, and `overrides` for what the adapters
  // only ask for by range.
  const manifest = {
    name: 'arbor-acp-agents',
    private: true,
    description: 'Real ACP agents for the acp remote provider tests (written by scripts/acp/setup.mjs)',
    dependencies: Object.fromEntries(Object.values(acpAgents).map((a) => [a.pkg, a.version])),
    overrides: { ...acpAgentsBundled },
  };
  writeFileSync(join(acpAgentsDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(
    `[setup:acp] $ npm install   (in ${acpAgentsDir}: ${Object.entries(wanted)
      .map(([p, v]) => `${p}@${v}`)
      .join(' ')})`,
  );
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--no-update-notifier'], { cwd: acpAgentsDir, env: npmEnv(), stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`[setup:acp] npm install of the ACP agents failed (exit ${r.status ?? r.signal}); check the npm registry is reachable.`);
    process.exit(1);
  }
  if (drift().length === 0 && entriesMissing().length === 0) writeFileSync(agentsStampFile, `${JSON.stringify(wanted, null, 2)}\n`);
}
const agentDrift = [...drift(), ...entriesMissing().map((a) => `${a.pkg}: ${a.entry} is missing`)];
if (agentDrift.length > 0) {
  console.error(
    `[setup:acp] ${acpAgentsDir}: ${agentDrift.join('; ')}. Run npm run setup:acp again (it reinstalls); if that does not help, delete ${acpAgentsDir}.`,
  );
  process.exit(1);
}
console.log(
  `[setup:acp] ACP agents: ${Object.entries(wanted)
    .map(([p, v]) => `${p} ${v}`)
    .join(', ')}`,
);
