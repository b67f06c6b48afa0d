/** Everything a request handler may use: the process's services (capabilities/deps.ts), built once by gateway/server.ts or a test. */
export type { ServiceDeps as GatewayDeps } from '../capabilities/deps';
