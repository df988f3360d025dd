export * from './config';
export * from './deployment';
export * from './manager';
export * from './names';
export * from './row';
export * from './secrets';
export * from './state';
export * from './trust-file';
