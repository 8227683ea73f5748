/**
 * Where each contract operation is served and how the sandbox names it: a leaf that the routes,
 * the faults, the request counts and the OpenAPI document share.
 */
import { APIS, OPERATIONS, type OperationKey } from 'convo-contract';

/** The operation's route template under its API's prefix. */
export function fullPath(key: OperationKey): string {
	const operation = OPERATIONS[key];
	return `${APIS[operation.api].prefix}${operation.path}`;
}

/** "METHOD /full/route/template": how faults and request counts name an endpoint. */
export function endpointOf(key: OperationKey): string {
	return `${OPERATIONS[key].method} ${fullPath(key)}`;
}
