/** Everything a request handler may use: the process's services (capabilities/bootstrap.ts), built once by gateway/server.ts or a test. */
export type { ServiceDeps } from '../capabilities/bootstrap';
