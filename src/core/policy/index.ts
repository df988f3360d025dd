export * from './sandbox';
export * from './approval';
