/** Everything a request handler may use: the process's services (capabilities/bootstrap.ts), built once by gateway/server.ts or a test. */
export type { ServiceDeps } from '../capabilities/bootstrap';
/** @deprecated the same type under its old name, for gateway/routes/{admin,usage}.ts until they say ServiceDeps. */
export type { ServiceDeps as GatewayDeps } from '../capabilities/bootstrap';
