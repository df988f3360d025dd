export * from './sandbox';
export * from './approval';
export * from './grants';
