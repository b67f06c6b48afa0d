// The official Python MCP SDK in a cached virtualenv (./python-venv.ts), for tests that drive the gateway
// as a Python client does.
import { spawnSync } from 'node:child_process';
import { ensureVenv, quietPython, type Venv } from './python-venv';

export const MCP_PYTHON_VERSION = '2.3.0';

const VENV: Venv = {
  name: `python-mcp-${MCP_PYTHON_VERSION}`,
  packages: [`mcp==${MCP_PYTHON_VERSION}`],
  works: (python) => spawnSync(python, ['-c', 'import mcp, mcp.client.streamable_http'], { stdio: 'ignore', timeout: 60_000, env: quietPython() }).status === 0,
};

/** A python with the `mcp` package: `MCP_PYTHON` when set, else the cached venv (built on first use). */
export async function ensureMcpPython(log: (line: string) => void = console.log): Promise<string> {
  return process.env.MCP_PYTHON || ensureVenv(VENV, log);
}
