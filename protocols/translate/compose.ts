import type { CanonicalRequest, Decoded, Encoded, FieldNames } from '../canonical/request';
import type { CanonicalResponse } from '../canonical/response';
import type { StreamDecoder, StreamEncoder } from '../canonical/stream';
import type { Protocol, SseEvent } from '../types';
import type {
  StreamStep,
  StreamTranslator,
  TranslateRequestOptions,
  TranslateResponseOptions,
  TranslateStreamOptions,
  Translator,
} from './types';

export interface TranslatorParts<ClientRequest> {
  client: Protocol;
  upstream: Protocol;
  decodeRequest(body: ClientRequest, opts: TranslateRequestOptions): Decoded;
  encodeRequest(req: CanonicalRequest, opts: TranslateRequestOptions): Encoded;
  /** The client protocol's names for canonical fields. */
  fieldNames: FieldNames;
  decodeResponse(json: unknown): CanonicalResponse;
  encodeResponse(res: CanonicalResponse, opts: TranslateResponseOptions): Record<string, unknown>;
  streamDecoder(): StreamDecoder;
  streamEncoder(opts: TranslateStreamOptions): StreamEncoder;
}

/** A translator from a client protocol's codec and an upstream protocol's codec, joined at the canonical form. */
export function compose<ClientRequest>(parts: TranslatorParts<ClientRequest>): Translator<ClientRequest> {
  return {
    name: `${parts.client}_to_${parts.upstream}`,
    request(body, opts = {}) {
      const decoded = parts.decodeRequest(body, opts);
      // A translated stream relays the upstream's first choice only (each stream decoder reads choice or
      // candidate 0): asking for more would bill choices the client never sees, so n is dropped and named.
      const oneChoice = decoded.request.stream === true && (decoded.request.n ?? 1) > 1;
      const request = oneChoice ? { ...decoded.request, n: undefined } : decoded.request;
      const encoded = parts.encodeRequest(request, opts);
      const dropped = [...decoded.dropped, ...(oneChoice ? [parts.fieldNames.n] : []), ...encoded.dropped.map((f) => parts.fieldNames[f])];
      return { body: encoded.body, dropped: [...new Set(dropped)] };
    },
    response(json, opts = {}) {
      return parts.encodeResponse(parts.decodeResponse(json), opts);
    },
    stream(opts = {}) {
      return new ComposedStream(parts.streamDecoder(), parts.streamEncoder(opts));
    },
  };
}

class ComposedStream implements StreamTranslator {
  constructor(
    private readonly decoder: StreamDecoder,
    private readonly encoder: StreamEncoder,
  ) {}

  push(event: SseEvent): StreamStep {
    const step: StreamStep = { frames: [], done: false };
    for (const delta of this.decoder.push(event.data, event.event)) {
      if (delta.type === 'error') step.error = delta.error;
      else for (const f of this.encoder.push(delta)) step.frames.push(f);
    }
    step.done = this.encoder.done;
    return step;
  }

  end(): string[] {
    return this.encoder.end();
  }
}
