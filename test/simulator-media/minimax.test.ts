import test from 'ava';
import { simFor, download, json, staysOpen } from './helpers';

const TEXT = 'The quick brown fox jumps over the lazy dog.'; // 44 chars -> 44/15 s
const speech = (extra: Record<string, unknown> = {}) => ({
  model: 'speech-2.6-hd',
  text: TEXT,
  stream: false,
  voice_setting: { voice_id: 'male-qn-qingse', speed: 1, vol: 1, pitch: 0 },
  audio_setting: { sample_rate: 32000, bitrate: 128000, format: 'mp3', channel: 1 },
  ...extra,
});

test('sync t2a_v2: hex audio that decodes to MP3 bytes, with extra_info', async (t) => {
  const sim = await simFor(t, { baseDelayMs: 0 });
  const res = await json(sim.post(`${sim.ch('mm')}/v1/t2a_v2`, speech()));
  t.deepEqual(res.base_resp, { status_code: 0, status_msg: 'success' });
  t.is(res.data.status, 2);
  const audio = Buffer.from(res.data.audio, 'hex');
  t.is(audio.subarray(0, 3).toString('ascii'), 'ID3');
  t.is(res.extra_info.usage_characters, 44);
  t.is(res.extra_info.audio_length, Math.round((44 / 15) * 1000));
  t.is(res.extra_info.audio_size, audio.length);
  t.is(res.extra_info.audio_sample_rate, 32000);
  t.is(res.extra_info.audio_format, 'mp3');
  t.is(res.extra_info.word_count, 9);
  t.regex(res.trace_id, /^\d{32}$/);
});

test('sync t2a_v2: url output serves the file; stream answers SSE ending with status 2', async (t) => {
  const sim = await simFor(t, { baseDelayMs: 0 });
  const res = await json(sim.post(`${sim.ch('mm')}/v1/t2a_v2`, speech({ output_format: 'url' })));
  const file = await download(res.data.audio);
  t.is(file.status, 200);
  t.is(file.type, 'audio/mpeg');
  const sse = await sim.post(`${sim.ch('mm')}/v1/t2a_v2`, speech({ stream: true }));
  t.is(sse.headers.get('content-type'), 'text/event-stream');
  const events = (await sse.text()).trim().split('\n\n').map((e) => JSON.parse(e.replace(/^data: /, '')));
  t.is(events.length, 3);
  t.deepEqual(events.map((e) => e.data.status), [1, 1, 2]);
  t.is(events[0].data.audio + events[1].data.audio, events[2].data.audio);
  t.is(events[2].extra_info.usage_characters, 44);
});

test('errors are HTTP 200 with a non-zero base_resp', async (t) => {
  const sim = await simFor(t, { baseDelayMs: 0 });
  const url = `${sim.ch('mm')}/v1/t2a_v2`;
  const noText = await sim.post(url, speech({ text: '' }));
  t.is(noText.status, 200);
  t.is((await json(noText)).base_resp.status_code, 2013);
  const tooLong = await json(sim.post(url, speech({ text: 'a'.repeat(10001) })));
  t.is(tooLong.base_resp.status_code, 2013);
  const voice = await json(sim.post(url, speech({ voice_setting: { voice_id: 'nobody-voice' } })));
  t.is(voice.base_resp.status_code, 2054);
});

test('sync faults: fail 1000, expire 1001, duration, hang', async (t) => {
  const sim = await simFor(t, { baseDelayMs: 0 });
  const ch = 'mm-f';
  const url = `${sim.ch(ch)}/v1/t2a_v2`;
  await sim.control.fault(ch, { type: 'fail' }, { times: 1 });
  t.is((await json(sim.post(url, speech()))).base_resp.status_code, 1000);
  await sim.control.fault(ch, { type: 'expire' }, { times: 1 });
  t.is((await json(sim.post(url, speech()))).base_resp.status_code, 1001);
  await sim.control.fault(ch, { type: 'duration', seconds: 12.5 }, { times: 1 });
  t.is((await json(sim.post(url, speech()))).extra_info.audio_length, 12500);
  await sim.control.fault(ch, { type: 'hang' }, { times: 1 });
  t.true(await staysOpen(sim.post(url, speech())));
});

test('async t2a: Processing then Success; file retrieve gives a download_url', async (t) => {
  const sim = await simFor(t); // speech weight 1: due after 1000 ms
  const sub = await json(sim.post(`${sim.ch('mm')}/v1/t2a_async_v2`, speech()));
  t.is(typeof sub.task_id, 'number');
  t.is(typeof sub.file_id, 'number');
  t.is(sub.usage_characters, 44);
  t.is(sub.base_resp.status_code, 0);
  const query = () => json(fetch(`${sim.ch('mm')}/v1/query/t2a_async_query_v2?task_id=${sub.task_id}`));
  const p = await query();
  t.is(p.status, 'Processing');
  t.is(p.file_id, sub.file_id);
  const early = await json(fetch(`${sim.ch('mm')}/v1/files/retrieve?file_id=${sub.file_id}`));
  t.is(early.base_resp.status_code, 2013, 'no file before the task succeeds');
  sim.clock.advance(1000);
  t.is((await query()).status, 'Success');
  const file = await json(fetch(`${sim.ch('mm')}/v1/files/retrieve?file_id=${sub.file_id}`));
  t.is(file.file.file_id, sub.file_id);
  t.is(file.file.purpose, 't2a_async');
  const audio = await download(file.file.download_url);
  t.is(audio.status, 200);
  t.is(audio.type, 'audio/mpeg');
  t.is(audio.bytes.length, file.file.bytes);
  const content = await download(`${sim.ch('mm')}/v1/files/retrieve_content?file_id=${sub.file_id}`);
  t.deepEqual(content.bytes, audio.bytes);
  const other = await json(fetch(`${sim.ch('other')}/v1/query/t2a_async_query_v2?task_id=${sub.task_id}`));
  t.is(other.base_resp.status_code, 2013);
});

test('async t2a faults: fail -> Failed, expire -> Expired, hang, poll_fail', async (t) => {
  const sim = await simFor(t);
  const ch = 'mm-af';
  const submit = async () => (await json(sim.post(`${sim.ch(ch)}/v1/t2a_async_v2`, speech()))).task_id as number;
  const query = (id: number) => fetch(`${sim.ch(ch)}/v1/query/t2a_async_query_v2?task_id=${id}`);
  await sim.control.fault(ch, { type: 'fail' }, { times: 1 });
  const failed = await submit();
  await sim.control.fault(ch, { type: 'expire' }, { times: 1 });
  const expired = await submit();
  await sim.control.fault(ch, { type: 'hang' }, { times: 1 });
  const hung = await submit();
  await sim.control.fault(ch, { type: 'poll_fail', count: 2 }, { times: 1 });
  const flaky = await submit();
  sim.clock.advance(60_000);
  t.is((await json(query(failed))).status, 'Failed');
  t.is((await json(query(expired))).status, 'Expired');
  t.is((await json(query(hung))).status, 'Processing');
  t.is((await query(flaky)).status, 500);
  t.is((await query(flaky)).status, 500);
  t.is((await json(query(flaky))).status, 'Success');
});

test('voice clone from an uploaded file; the voice is listed and usable', async (t) => {
  const sim = await simFor(t, { baseDelayMs: 0 });
  const form = new FormData();
  form.append('purpose', 'voice_clone');
  form.append('file', new Blob([Buffer.alloc(2048, 1)], { type: 'audio/mpeg' }), 'sample.mp3');
  const up = await json(fetch(`${sim.ch('mm-v')}/v1/files/upload`, { method: 'POST', body: form }));
  t.is(up.base_resp.status_code, 0);
  t.is(up.file.bytes, 2048);
  t.is(up.file.filename, 'sample.mp3');
  t.is(up.file.purpose, 'voice_clone');
  const cloneUrl = `${sim.ch('mm-v')}/v1/voice_clone`;
  t.is((await json(sim.post(cloneUrl, { file_id: up.file.file_id, voice_id: 'bad' }))).base_resp.status_code, 2013);
  t.is((await json(sim.post(cloneUrl, { file_id: 12345, voice_id: 'MyVoice001' }))).base_resp.status_code, 2013);
  const clone = await json(sim.post(cloneUrl, { file_id: up.file.file_id, voice_id: 'MyVoice001', text: 'Hello there', model: 'speech-2.6-hd' }));
  t.deepEqual(clone.base_resp, { status_code: 0, status_msg: 'success' });
  t.is(clone.input_sensitive, false);
  t.is((await download(clone.demo_audio)).status, 200);
  t.is((await json(sim.post(cloneUrl, { file_id: up.file.file_id, voice_id: 'MyVoice001' }))).base_resp.status_code, 2039);
  const byUrl = await json(sim.post(cloneUrl, { audio_url: 'https://x/voice.mp3?dur=20', voice_id: 'UrlVoice02' }));
  t.is(byUrl.base_resp.status_code, 0);
  t.is(byUrl.demo_audio, '');
  const voices = await json(fetch(`${sim.ch('mm-v')}/v1/get_voice?voice_type=all`));
  t.deepEqual(voices.voice_cloning.map((v: any) => v.voice_id), ['MyVoice001', 'UrlVoice02']);
  t.true(voices.system_voice.some((v: any) => v.voice_id === 'male-qn-qingse'));
  const sys = await json(sim.post(`${sim.ch('mm-v')}/v1/get_voice`, { voice_type: 'system' }));
  t.is(sys.voice_cloning, undefined);
  t.true(sys.system_voice.length >= 10);
  const spoken = await json(sim.post(`${sim.ch('mm-v')}/v1/t2a_v2`, speech({ voice_setting: { voice_id: 'MyVoice001' } })));
  t.is(spoken.base_resp.status_code, 0);
  const elsewhere = await json(sim.post(`${sim.ch('mm-other')}/v1/t2a_v2`, speech({ voice_setting: { voice_id: 'MyVoice001' } })));
  t.is(elsewhere.base_resp.status_code, 2054, 'cloned voices belong to one channel (account)');
  await sim.control.fault('mm-v', { type: 'fail' }, { times: 1 });
  t.is((await json(sim.post(cloneUrl, { audio_url: 'https://x/v.mp3', voice_id: 'FailVoice3' }))).base_resp.status_code, 1000);
});
