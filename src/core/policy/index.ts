export * from './approval';
export * from './grants';
export * from './sandbox';
