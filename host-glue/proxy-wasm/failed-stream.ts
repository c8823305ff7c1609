// The streams a failed VM leaves behind (§5.1): fail-open bypasses the filter, fail-closed answers
// every seam call with Envoy's 503 `wasm_fail_stream`.

import type {
  BodyVerdict,
  HeaderList,
  HttpFilterStream,
  RequestHeadersVerdict,
  ResponseHeadersVerdict,
} from './http-filter';
import { failStreamReply } from './local-reply';

/** A stream past a failed VM with fail-open: the filter is not installed (§5.1). */
export class BypassStream implements HttpFilterStream {
  responsePassesThrough(): boolean {
    return true;
  }
  responsePassed(): void {}
  requestHeaders(headers: HeaderList): RequestHeadersVerdict {
    return { kind: 'continue', headers };
  }
  requestBody(chunk: Uint8Array): BodyVerdict {
    return { kind: 'continue', data: chunk };
  }
  responseHeaders(headers: HeaderList): ResponseHeadersVerdict {
    return { kind: 'continue', headers };
  }
  responseBody(chunk: Uint8Array): BodyVerdict {
    return { kind: 'continue', data: chunk };
  }
  end(): void {}
}

/** A stream past a failed VM with fail-closed: Envoy's stub filter answers 503 `wasm_fail_stream`. */
export class FailedStream implements HttpFilterStream {
  private readonly reply = failStreamReply();
  requestHeaders(): RequestHeadersVerdict {
    return { kind: 'respond', response: this.reply };
  }
  requestBody(): BodyVerdict {
    return { kind: 'respond', response: this.reply };
  }
  responseHeaders(): ResponseHeadersVerdict {
    return { kind: 'respond', response: this.reply };
  }
  responseBody(): BodyVerdict {
    return { kind: 'respond', response: this.reply };
  }
  end(): void {}
}
