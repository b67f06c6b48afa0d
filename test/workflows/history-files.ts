import fs from 'node:fs';
import path from 'node:path';
import proto from '@temporalio/proto';

const { temporal } = proto;
type IHistory = proto.temporal.api.history.v1.IHistory;
type History = proto.temporal.api.history.v1.History;

/**
 * The recorded histories (test/workflows/histories/<workflowType>/<case>.json):
 * written by dev/scripts/record-histories.ts, replayed by replay.test.ts.
 *
 * They are the History message as protobufjs writes it as a plain object
 * (64-bit numbers and bytes as strings, enums by name), read back with
 * `History.fromObject`. Not the SDK's historyToJSON/historyFromJSON: with the
 * SDK's packages each holding its own protobufjs copy (as this install
 * does), those throw "type must be a Type".
 */
export const HISTORIES_DIR = path.join(path.dirname(new URL(import.meta.url).pathname), 'histories');

const HistoryMessage = temporal.api.history.v1.History;

export function historyToFile(history: IHistory): string {
  const obj = HistoryMessage.toObject(HistoryMessage.fromObject(history), { longs: String, enums: String, bytes: String });
  return `${JSON.stringify(obj, null, 1)}\n`;
}

export interface HistoryFile {
  /** `<workflowType>/<case>` */
  name: string;
  workflowType: string;
  workflowId: string;
  history: History;
}

export function readHistoryFile(file: string): HistoryFile {
  const history = HistoryMessage.fromObject(JSON.parse(fs.readFileSync(file, 'utf8')));
  const rel = path.relative(HISTORIES_DIR, file).replace(/\.json$/, '');
  const started = history.events[0]?.workflowExecutionStartedEventAttributes;
  return { name: rel, workflowType: started?.workflowType?.name ?? rel.split(path.sep)[0], workflowId: started?.workflowId ?? rel, history };
}

/** Every recorded history, sorted by name. */
export function readHistoryFiles(dir = HISTORIES_DIR): HistoryFile[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => readHistoryFile(path.join(dir, f)));
}

/** The activity types of a history's local activities, in the order their markers were recorded. */
export function localActivityTypes(h: HistoryFile): string[] {
  const types: string[] = [];
  for (const e of h.history.events) {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') continue;
    for (const p of marker.details?.data?.payloads ?? []) {
      const type = (JSON.parse(Buffer.from(p.data ?? new Uint8Array()).toString('utf8')) as { activity_type?: string }).activity_type;
      if (type) types.push(type);
    }
  }
  return types;
}
