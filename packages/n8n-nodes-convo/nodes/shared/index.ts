/**
 * The contract of the Convo service: every operation of SPEC section 4 with its method, path,
 * API, request and response schemas and documented errors; the limits of section 8; the
 * message_created event; request building and error explanation. The nodes, the runner and the
 * sandbox all read the service from here. Also convo-runner's control API as the node pack uses
 * it: routes, the id pattern, rate bounds, chunk size (runnerRoutes.ts), event signatures
 * (runner.ts), and the request and answer schemas, one file per resource under runnerApi/ as the
 * service's are under schemas/: the bodies the pack sends are the ones the runner checks.
 */
export * from './errorBody';
export * from './errorGuidance';
export * from './limits';
export * from './operations';
export * from './phone';
export * from './request';
export * from './retryPolicy';
export * from './runner';
export * from './runnerRoutes';
export * from './validation';
export { noBody, UUID_PATTERN } from './schemas/common';
export * from './schemas/agent';
export * from './schemas/contact';
export * from './schemas/conversation';
export * from './schemas/event';
export * from './schemas/message';
export * from './schemas/searchItem';
export * from './schemas/template';
export { runnerIdParams, runnerRate } from './runnerApi/common';
export * from './runnerApi/answers';
export * from './runnerApi/campaign';
export * from './runnerApi/reindex';
export * from './runnerApi/suppression';
export * from './runnerApi/budget';
export * from './runnerApi/webhook';
