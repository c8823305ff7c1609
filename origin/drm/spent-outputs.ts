// Frees the buffers a Node cipher's update() returns once their bytes have been copied out, instead
// of leaving them to the garbage collector.
//
// Why: every update() returns a fresh ArrayBuffer of its output's size (Node 20's CipherBase::Update),
// and V8 counts those bytes as external memory. A cenc request copies each output into the segment
// and drops it; the dropped bytes pile up between the rare scavenges (the request path allocates
// little on the JS heap) and V8 answers the external memory with mark-compacts: in the bench's
// process about one per 15 MB encrypted, 25–35 % of a cenc request's CPU (docs/design/drm.md "Cost
// and caching"). Transferring the outputs to a MessagePort whose peer is closed detaches them
// (HTML structured serialize with transfer) and drops the message, so their memory goes back at
// once and no collection is scheduled for it: one postMessage per fragment for all its outputs.
//
// Only a buffer that owns its whole ArrayBuffer is transferred (Node's update() output); a view of
// anything else (a pooled buffer, a slice of Buffer's pool) is left alone. If the transfer throws
// (a runtime that refuses it), the buffers are left to the collector as before: nothing else changes.

import { MessageChannel, MessagePort } from 'node:worker_threads';

/** The outputs of one apply(), freed together by release(). */
export class SpentOutputs {
  private readonly buffers: ArrayBuffer[] = [];

  /** `out`, noted to be freed at release(): nothing may use it afterwards. */
  keep<T extends Uint8Array>(out: T): T {
    const b = out.buffer;
    if (b instanceof ArrayBuffer && out.byteOffset === 0 && b.byteLength === out.byteLength && out.byteLength > 0) {
      this.buffers.push(b);
    }
    return out;
  }

  /** Frees every buffer kept since the last release(). */
  release(): void {
    if (this.buffers.length === 0) return;
    try {
      sink().postMessage(null, this.buffers);
    } catch {
      // Left to the garbage collector.
    } finally {
      this.buffers.length = 0;
    }
  }
}

let port: MessagePort | undefined;

/** A port whose peer is closed: what is posted to it is serialised (transfers detached) and dropped. */
function sink(): MessagePort {
  if (port === undefined) {
    const channel = new MessageChannel();
    channel.port2.close();
    channel.port1.unref();
    port = channel.port1;
  }
  return port;
}
