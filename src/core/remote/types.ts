// The remote seam's contract lives with the providers that carry it (subagent layer).
export * from '../subagent/remote-driver';
