export { CommandSandbox, type CommandSandboxOptions, type Confinement } from './command-sandbox';
export { sandboxStatus, describeSandboxStatus, DEFAULT_BWRAP, type SandboxStatus } from './detect';
export { bwrapArgs, type SandboxPlan, type ConfinedMode } from './bwrap-args';
export { protectedMounts, type ProtectedMounts } from './protected-mounts';
export { commandEnv, KEY_VARIABLES } from './env';
