export * from './events';
export * from './errors';
export { checkHeader, checkEventShape, isSessionId, isEventType } from './validate';
export { Session, type SessionOptions } from './session';
export { deriveMessages, MISSING_RESULT, type DerivedMessage } from './derive';
export { policyOverrides, descriptorOf, type Override, type PolicyOverrides } from './folds';
