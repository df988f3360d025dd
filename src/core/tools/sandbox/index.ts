export { bwrapArgs, type ConfinedMode, type SandboxPlan } from './bwrap-args';
export { CommandSandbox, type CommandSandboxOptions, type Confinement } from './command-sandbox';
export { DEFAULT_BWRAP, describeSandboxStatus, type SandboxStatus, sandboxStatus } from './detect';
export { commandEnv, KEY_VARIABLES } from './env';
export { type ProtectedMounts, protectedMounts } from './protected-mounts';
export { unixSocketFilter } from './seccomp';
