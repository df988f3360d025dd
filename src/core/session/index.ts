export { type DerivedMessage, deriveMessages, MISSING_RESULT } from './derive';
export * from './errors';
export * from './events';
export { descriptorOf, type Override, type PolicyOverrides, policyOverrides } from './folds';
export { Session, type SessionOptions } from './session';
export { checkEventShape, checkHeader, isEventType, isSessionId } from './validate';
