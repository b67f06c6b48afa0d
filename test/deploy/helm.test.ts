import test from 'ava';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import { ensureHelm, ensureKubernetesValidate } from '../../dev/scripts/lib/tools';
import { loadConfig, paymentsConfigProblem } from '../../platform/config';
import { containerEnv } from './image-env';
import { temporalConnectionOptions } from '../../platform/temporal';

/**
 * The Helm chart (deploy/helm/model-gateway): `helm lint`, `helm template` with the defaults and with
 * every optional part on, each rendered manifest validated offline against the Kubernetes schemas
 * (PyPI kubernetes-validate, strict: unknown fields fail), and the parts issue 24 asks for read back
 * from the rendered objects. Helm is built from the Go module proxy and cached (dev/scripts/lib/tools.ts).
 */
const run = promisify(execFile);
const CHART = path.resolve('deploy/helm/model-gateway');
const FULL = path.join(CHART, 'ci', 'full-values.yaml');
/** An older Kubernetes (autoscaling/v2 and policy/v1 are GA from 1.23/1.21) and the schemas' newest. */
const KUBE_VERSIONS = ['1.25.0', '1.37.0'];

type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: any; data?: Record<string, string>; stringData?: Record<string, string> };

let helm = '';
let validate = '';
let python = '';
test.before(async () => {
  helm = await ensureHelm(() => undefined);
  validate = await ensureKubernetesValidate(() => undefined);
  python = path.join(path.dirname(validate), 'python');
});

async function render(...args: string[]): Promise<{ yaml: string; objects: K8sObject[] }> {
  const { stdout } = await run(helm, ['template', 'mg', CHART, '--namespace', 'gateway', ...args], { maxBuffer: 16 << 20 });
  // PyYAML comes with kubernetes-validate: the rendered stream as JSON.
  const { stdout: json } = await runWithInput(python, ['-c', 'import sys, json, yaml; print(json.dumps([d for d in yaml.safe_load_all(sys.stdin) if d]))'], stdout);
  return { yaml: stdout, objects: JSON.parse(json) as K8sObject[] };
}

function runWithInput(cmd: string, args: string[], input: string): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { maxBuffer: 16 << 20 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve({ stdout })));
    child.stdin!.end(input);
  });
}

/** Every object of a kind the schemas know, one file each, through `kubernetes-validate --strict`. */
async function validateAll(objects: K8sObject[], kube: string): Promise<string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chart-'));
  try {
    const files = objects
      .filter((o) => !o.apiVersion.startsWith('monitoring.coreos.com/'))
      .map((o, i) => {
        const file = path.join(dir, `${i}-${o.kind}-${o.metadata.name}.json`);
        fs.writeFileSync(file, JSON.stringify(o));
        return file;
      });
    try {
      const { stdout } = await run(validate, ['--strict', '--no-warn', '-k', kube, ...files], { maxBuffer: 16 << 20 });
      return stdout.split('\n').filter((l) => l.includes('passed'));
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`kubernetes-validate ${kube} failed:\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const one = (objects: K8sObject[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
};
/** A Deployment's container environment as the pod gets it: the image's ENV, then envFrom (ConfigMap, Secret) in order, then env. */
function podEnv(objects: K8sObject[], deployment: string, container = 0): Record<string, string> {
  const c = one(objects, 'Deployment', deployment).spec.template.spec.containers[container];
  const from = (c.envFrom ?? []).map((f: { configMapRef?: { name: string }; secretRef?: { name: string } }) =>
    f.configMapRef ? one(objects, 'ConfigMap', f.configMapRef.name).data! : one(objects, 'Secret', f.secretRef!.name).stringData!);
  return containerEnv(...from, envOf(one(objects, 'Deployment', deployment), container));
}
const envOf = (d: K8sObject, container = 0) => Object.fromEntries((d.spec.template.spec.containers[container].env ?? []).map((e: { name: string; value?: string }) => [e.name, e.value]));

test('helm lint passes with the defaults and with every option on', async (t) => {
  const plain = await run(helm, ['lint', '--strict', CHART]);
  t.regex(plain.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  const full = await run(helm, ['lint', '--strict', CHART, '-f', FULL]);
  t.regex(full.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
});

for (const [label, args] of [['defaults', []], ['every option on', ['-f', FULL]]] as const) {
  test(`the rendered manifests (${label}) are valid against the Kubernetes schemas`, async (t) => {
    const { objects } = await render(...args);
    for (const kube of KUBE_VERSIONS) {
      const passed = await validateAll(objects, kube);
      const checked = objects.filter((o) => !o.apiVersion.startsWith('monitoring.coreos.com/')).length;
      t.is(passed.length, checked, `kubernetes ${kube}: ${passed.length} of ${checked} passed`);
    }
  });
}

test('gateway: readiness on its stores, a preStop drain, an HPA on CPU, a PDB', async (t) => {
  const { objects } = await render();
  const gw = one(objects, 'Deployment', 'mg-model-gateway-gateway');
  const c = gw.spec.template.spec.containers[0];
  t.deepEqual(c.args, ['gateway']);
  t.false('GATEWAY_HEAP_MB' in envOf(gw), 'no cap given: Node sizes the heap from the pod\'s memory limit');
  t.is(c.readinessProbe.httpGet.path, '/readyz');
  t.is(c.livenessProbe.httpGet.path, '/healthz');
  t.deepEqual(c.lifecycle.preStop.exec.command, ['sleep', '10']);
  t.true(gw.spec.template.spec.terminationGracePeriodSeconds > 10, 'the grace period outlasts the preStop sleep');
  t.is(gw.spec.replicas, undefined, 'replicas belong to the HPA');
  t.deepEqual(gw.spec.template.spec.initContainers.map((i: { args: string[] }) => i.args), [['seed']]);
  const hpa = one(objects, 'HorizontalPodAutoscaler', 'mg-model-gateway-gateway');
  t.is(hpa.spec.scaleTargetRef.name, gw.metadata.name);
  t.is(hpa.spec.metrics[0].resource.name, 'cpu');
  t.truthy(c.resources.requests.cpu, 'a CPU request: the HPA measures against it');
  const pdb = one(objects, 'PodDisruptionBudget', 'mg-model-gateway-gateway');
  t.deepEqual(pdb.spec.selector.matchLabels, gw.spec.selector.matchLabels);
  const svc = one(objects, 'Service', 'mg-model-gateway-gateway');
  t.deepEqual(svc.spec.selector, gw.spec.template.metadata.labels);
  const { objects: capped } = await render('--set', 'gateway.heapMB=640');
  t.is(envOf(one(capped, 'Deployment', 'mg-model-gateway-gateway')).GATEWAY_HEAP_MB, '640', 'the cap the entry point passes to node (test/deploy/entrypoint.test.ts)');
});

test('one worker Deployment per queue, each with its own metrics port and a PDB', async (t) => {
  const { objects } = await render();
  const ports = new Set<number>();
  for (const queue of ['media', 'knowledge', 'webhooks']) {
    const d = one(objects, 'Deployment', `mg-model-gateway-worker-${queue}`);
    const env = envOf(d);
    t.is(env.WORKER_QUEUE, queue);
    t.deepEqual(d.spec.template.spec.containers[0].args, ['worker']);
    ports.add(Number(env.METRICS_PORT));
    const pdb = one(objects, 'PodDisruptionBudget', `mg-model-gateway-worker-${queue}`);
    t.deepEqual(pdb.spec.selector.matchLabels, d.spec.selector.matchLabels);
    // No two Deployments select each other's pods.
    t.is(d.spec.selector.matchLabels['app.kubernetes.io/component'], `worker-${queue}`);
  }
  t.deepEqual([...ports].sort(), [9465, 9466, 9467]);
  t.is(byKind(objects, 'Deployment').length, 4);
  const config = one(objects, 'ConfigMap', 'mg-model-gateway-config');
  t.is(config.data!.TEMPORAL_TASK_QUEUE, 'media');
  const { objects: off } = await render('--set', 'workers.knowledge.enabled=false');
  t.false(off.some((o) => o.metadata.name.endsWith('worker-knowledge')));
});

test('every container runs as non-root on a read-only root file system, with a writable /tmp', async (t) => {
  const { objects } = await render();
  for (const d of byKind(objects, 'Deployment')) {
    const pod = d.spec.template.spec;
    t.true(pod.securityContext.runAsNonRoot, d.metadata.name);
    for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
      const what = `${d.metadata.name}/${c.name}`;
      t.true(c.securityContext.readOnlyRootFilesystem, what);
      t.false(c.securityContext.allowPrivilegeEscalation, what);
      const tmp = c.volumeMounts.find((m: { mountPath: string }) => m.mountPath === '/tmp');
      t.truthy(tmp && !tmp.readOnly && pod.volumes.find((v: { name: string; emptyDir?: object }) => v.name === tmp.name)?.emptyDir, `${what}: /tmp is an emptyDir`);
    }
  }
});

test('secrets: generated keys of the right shape, kept on uninstall, never in the ConfigMap; vendor keys passed through', async (t) => {
  const { objects } = await render();
  const secret = one(objects, 'Secret', 'mg-model-gateway-secrets');
  t.regex(secret.stringData!.KEY_ENCRYPTION_KEY, /^[0-9a-f]{64}$/);
  t.true(secret.stringData!.ADMIN_TOKEN.length >= 16);
  t.is(secret.metadata.annotations!['helm.sh/resource-policy'], 'keep');
  const config = one(objects, 'ConfigMap', 'mg-model-gateway-config');
  for (const name of ['ADMIN_TOKEN', 'KEY_ENCRYPTION_KEY', 'MONGO_URL', 'REDIS_URL']) t.false(name in config.data!, `${name} is not in the ConfigMap`);

  const { objects: full } = await render('-f', FULL);
  const given = one(full, 'Secret', 'mg-model-gateway-secrets').stringData!;
  t.is(given.OPENAI_API_KEY, 'sk-test');
  t.is(given.OPENAI_BASE_URL, 'https://api.openai.com/v1');
  t.is(given.KEY_ENCRYPTION_KEYS_PREVIOUS, 'fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210');
  t.is(envOf(one(full, 'Deployment', 'mg-model-gateway-worker-media')).CATALOGUE_FILE, '/etc/model-gateway/catalogue/catalogue.json');

  const { objects: external } = await render('--set', 'secrets.existingSecret=ops-managed');
  t.is(byKind(external, 'Secret').length, 0);
  t.is(one(external, 'Deployment', 'mg-model-gateway-gateway').spec.template.spec.containers[0].envFrom[1].secretRef.name, 'ops-managed');
});

test('a malformed key or vendor entry fails the render, naming the value', async (t) => {
  const bad = await t.throwsAsync(render('--set', 'secrets.keyEncryptionKey=not-hex'));
  t.regex(bad!.message, /secrets\.keyEncryptionKey must be 64 hex characters/);
  const vendor = await t.throwsAsync(render('--set', 'secrets.vendor.OPENAI_TOKEN=x'));
  t.regex(vendor!.message, /secrets\.vendor\.OPENAI_TOKEN/);
});

test('ServiceMonitor (optional) scrapes the metrics Services of every component', async (t) => {
  const { objects: plain } = await render();
  t.is(byKind(plain, 'ServiceMonitor').length, 0);
  const { objects } = await render('-f', FULL);
  const sm = one(objects, 'ServiceMonitor', 'mg-model-gateway');
  t.is(sm.apiVersion, 'monitoring.coreos.com/v1');
  t.is(sm.metadata.labels!.release, 'prometheus');
  const metricsServices = byKind(objects, 'Service').filter((s) => Object.entries(sm.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels?.[k] === v));
  t.deepEqual(metricsServices.map((s) => s.metadata.name).sort(), ['gateway', 'worker-knowledge', 'worker-media', 'worker-webhooks'].map((c) => `mg-model-gateway-${c}-metrics`));
  for (const s of metricsServices) t.is(s.spec.ports[0].name, sm.spec.endpoints[0].port);
});

test('the rendered gateway and workers start in production: their pod environment passes the start checks', async (t) => {
  const { objects } = await render();
  for (const d of byKind(objects, 'Deployment')) {
    const c = loadConfig(podEnv(objects, d.metadata.name));
    t.is(c.DEPLOYMENT_MODE, 'production', d.metadata.name);
    t.is(paymentsConfigProblem(c), null, `${d.metadata.name}: ${paymentsConfigProblem(c)}`);
  }
  const { objects: stripe } = await render('--set', 'topups.enabled=true', '--set', 'publicBaseUrl=https://api.example.com',
    '--set', 'secrets.stripeSecretKey=sk_test_abcdefgh', '--set', 'secrets.stripeWebhookSecret=whsec_0123456789abcdef');
  const on = loadConfig(podEnv(stripe, 'mg-model-gateway-gateway'));
  t.true(on.TOPUPS_ENABLED);
  t.is(paymentsConfigProblem(on), null);
});

test('the chart refuses a DEPLOYMENT_MODE other than production (it would serve the stand-in payment processor)', async (t) => {
  for (const args of [
    ['--set', 'env.DEPLOYMENT_MODE=development', '--set', 'topups.enabled=true', '--set', 'publicBaseUrl=https://api.example.com'],
    ['--set-json', 'extraEnv=[{"name":"DEPLOYMENT_MODE","value":"test"}]'],
  ]) {
    const err = await t.throwsAsync(render(...args));
    t.regex(err!.message, /DEPLOYMENT_MODE=(development|test): the chart runs production only/);
  }
  const { objects } = await render('--set-json', 'extraEnv=[{"name":"DEPLOYMENT_MODE","value":"production"}]');
  t.is(loadConfig(podEnv(objects, 'mg-model-gateway-gateway')).DEPLOYMENT_MODE, 'production');
});

test('the media worker (batches run on its queue) sends batch lines to the gateway Service, not its own loopback', async (t) => {
  for (const [ns, args] of [['gateway', []], ['gateway', ['--set', 'gateway.service.port=8081']]] as const) {
    const { objects } = await render(...args);
    const svc = one(objects, 'Service', 'mg-model-gateway-gateway');
    const url = new URL(loadConfig(podEnv(objects, 'mg-model-gateway-worker-media')).GATEWAY_INTERNAL_URL ?? 'http://127.0.0.1/');
    t.is(url.hostname, `${svc.metadata.name}.${ns}.svc`);
    t.is(Number(url.port || 80), svc.spec.ports[0].port);
    // The Service's port reaches the gateway container's listening port.
    const gw = one(objects, 'Deployment', 'mg-model-gateway-gateway').spec.template.spec.containers[0];
    t.is(gw.ports.find((p: { name: string }) => p.name === svc.spec.ports[0].targetPort).containerPort, Number(podEnv(objects, 'mg-model-gateway-gateway').PORT));
  }
  const { objects: given } = await render('--set', 'gateway.internalUrl=http://gw.internal:8080');
  t.is(podEnv(given, 'mg-model-gateway-worker-media').GATEWAY_INTERNAL_URL, 'http://gw.internal:8080');
});

test('each worker lets running activities finish for SHUTDOWN_GRACE_MS, under the pod\'s terminationGracePeriodSeconds', async (t) => {
  const { objects } = await render();
  for (const queue of ['media', 'knowledge', 'webhooks']) {
    const name = `mg-model-gateway-worker-${queue}`;
    const kill = one(objects, 'Deployment', name).spec.template.spec.terminationGracePeriodSeconds * 1000;
    const grace = loadConfig(podEnv(objects, name)).SHUTDOWN_GRACE_MS;
    t.true(grace <= kill - 10_000, `${name}: SHUTDOWN_GRACE_MS ${grace} against a ${kill} ms grace period`);
    t.true(grace >= kill / 2, `${name}: most of the grace period goes to running activities (${grace} of ${kill} ms)`);
  }
  const gw = one(objects, 'Deployment', 'mg-model-gateway-gateway').spec.template.spec;
  const preStop = Number(gw.containers[0].lifecycle.preStop.exec.command[1]) * 1000;
  t.true(preStop + loadConfig(podEnv(objects, 'mg-model-gateway-gateway')).SHUTDOWN_GRACE_MS < gw.terminationGracePeriodSeconds * 1000, 'gateway: preStop sleep + grace under the pod\'s');
  const { objects: longer } = await render('--set', 'workers.media.terminationGracePeriodSeconds=900', '--set', 'workers.media.shutdownGraceSeconds=840');
  t.is(podEnv(longer, 'mg-model-gateway-worker-media').SHUTDOWN_GRACE_MS, '840000');
  const bad = await t.throwsAsync(render('--set', 'workers.media.shutdownGraceSeconds=300'));
  t.regex(bad!.message, /workers\.media\.shutdownGraceSeconds \(300\) must be below workers\.media\.terminationGracePeriodSeconds \(300\)/);
});

test('Temporal TLS: plaintext by default; the API key in the Secret, the mTLS pair and CA mounted where the env points, in every pod', async (t) => {
  const { objects: plain } = await render();
  const plainEnv = podEnv(plain, 'mg-model-gateway-worker-media');
  t.deepEqual(temporalConnectionOptions(loadConfig(plainEnv)), { address: 'temporal-frontend:7233' });

  const { objects: cloud } = await render('--set', 'temporal.address=prod.a1b2c.tmprl.cloud:7233', '--set', 'secrets.temporalApiKey=the-key');
  const cloudOptions = temporalConnectionOptions(loadConfig(podEnv(cloud, 'mg-model-gateway-gateway')));
  t.deepEqual(cloudOptions, { address: 'prod.a1b2c.tmprl.cloud:7233', tls: true, apiKey: 'the-key' });
  t.false('TEMPORAL_API_KEY' in one(cloud, 'ConfigMap', 'mg-model-gateway-config').data!, 'the key is in the Secret only');

  const { objects } = await render('-f', FULL);
  for (const d of byKind(objects, 'Deployment')) {
    const env = podEnv(objects, d.metadata.name);
    const pod = d.spec.template.spec;
    const mounts = pod.containers[0].volumeMounts as Array<{ name: string; mountPath: string; readOnly?: boolean }>;
    // Each file the env names lies in a read-only mount of the Secret that holds it, under the key the volume selects.
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'chart-tls-'));
    try {
      const local: Record<string, string> = {};
      for (const [name, secret] of [['TEMPORAL_TLS_CERT_FILE', 'temporal-client-tls'], ['TEMPORAL_TLS_KEY_FILE', 'temporal-client-tls'], ['TEMPORAL_TLS_CA_FILE', 'temporal-ca']] as const) {
        const file = env[name];
        t.truthy(file, `${d.metadata.name}: ${name}`);
        const mount = mounts.find((m) => file.startsWith(`${m.mountPath}/`));
        t.truthy(mount?.readOnly, `${d.metadata.name}: ${file} is in a read-only mount`);
        const volume = pod.volumes.find((v: { name: string }) => v.name === mount!.name);
        t.is(volume.secret.secretName, secret);
        t.true(volume.secret.items.some((i: { path: string }) => i.path === path.basename(file)), `${file}: its Secret's key is projected`);
        local[name] = path.join(scratch, name);
        fs.writeFileSync(local[name], `${name} PEM`);
      }
      const o = temporalConnectionOptions(loadConfig({ ...env, ...local }));
      const tls = o.tls as unknown as { serverNameOverride: string; clientCertPair: { crt: Buffer }; serverRootCACertificate: Buffer };
      t.is(tls.serverNameOverride, 'temporal.internal');
      t.is(tls.clientCertPair.crt.toString(), 'TEMPORAL_TLS_CERT_FILE PEM');
      t.is(tls.serverRootCACertificate.toString(), 'TEMPORAL_TLS_CA_FILE PEM');
      t.is(o.apiKey, 'temporal-cloud-api-key-for-the-chart-check');
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  }
});

test('worker rollouts: rolling by default (surge one, none unavailable); Recreate, old pods gone first, when asked', async (t) => {
  const { objects } = await render();
  for (const queue of ['media', 'knowledge', 'webhooks']) {
    t.deepEqual(one(objects, 'Deployment', `mg-model-gateway-worker-${queue}`).spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
  }
  const { objects: recreate } = await render('--set', 'workers.media.updateStrategy.type=Recreate', '--set', 'workers.media.updateStrategy.rollingUpdate=null');
  t.deepEqual(one(recreate, 'Deployment', 'mg-model-gateway-worker-media').spec.strategy, { type: 'Recreate' });
  for (const kube of KUBE_VERSIONS) {
    const passed = await validateAll(recreate, kube);
    t.is(passed.length, recreate.filter((o) => !o.apiVersion.startsWith('monitoring.coreos.com/')).length, `kubernetes ${kube}`);
  }
});
