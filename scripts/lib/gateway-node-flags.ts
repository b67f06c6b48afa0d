/**
 * The node flags the gateway process runs with, everywhere it runs: `npm start`
 * (package.json) and the Docker image (scripts/docker-entrypoint.sh) spell them
 * out, `npm run dev` and the benchmarks take them from here, and
 * test/foundation/node-flags.test.ts checks that all of them agree.
 *
 * `--max-semi-space-size=2` (MiB): V8's young generation at most 3 x 2 MiB
 * instead of up to 3 x 16 MiB. The gateway's requests allocate little that
 * outlives them, so the smaller nursery is scavenged more often at about the
 * same CPU and the process holds ~20 MB less when idle and under 2,000 open
 * streams (bench/README.md, round 4).
 */
export const GATEWAY_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];
