// The plugin callbacks of one HTTP stream, as cpp-host's ContextBase makes them: each call is
// guarded by CHECK_FAIL (§5.1, §6.15) and followed by the VM's after-call actions. HttpStream
// (stream.ts) decides when to make them; this layer only turns the callbacks' i32 into statuses.

import { DataStatus } from './abi';
import { ContextBase } from './context';
import type { LocalResponse } from './http-filter';
import { failStreamReply } from './local-reply';
import { dataStatus, headersStopped } from './stream-state';

export abstract class StreamCalls extends ContextBase {
  /** cpp-host stream_failed_ / Envoy failure_local_reply_sent_. */
  protected streamFailed = false;
  protected failureLocalReplySent = false;

  /** Envoy FilterManager::sendLocalReply (stream.ts). */
  protected abstract sendReply(reply: LocalResponse, throughPlugin: boolean): void;

  protected onCreate(): void {
    if (!this.failed && !this.inVmContextCreated && this.vm.has('proxy_on_context_create')) {
      try {
        this.vm.callVoid(this, 'proxy_on_context_create', this.id, this.root.id);
      } finally {
        this.vm.afterCallActions();
      }
    }
    this.inVmContextCreated = true;
  }

  /** cpp-host ContextBase::onRequestHeaders/onResponseHeaders with CHECK_FAIL_HTTP; true = stopped. */
  protected onHeaders(
    callback: 'proxy_on_request_headers' | 'proxy_on_response_headers',
    count: number,
    endOfStream: boolean,
  ): boolean {
    const before = this.checkFail();
    if (before !== 'ok') return before === 'closed';
    if (!this.vm.has(callback)) return false;
    try {
      const raw = this.vm.callWord(this, callback, this.id, count, endOfStream ? 1 : 0);
      const after = this.checkFail();
      if (after !== 'ok') return after === 'closed';
      return headersStopped(raw, this.vm.stopIteration);
    } finally {
      this.vm.afterCallActions();
    }
  }

  protected onBody(
    callback: 'proxy_on_request_body' | 'proxy_on_response_body',
    size: number,
    endOfStream: boolean,
  ): DataStatus {
    const before = this.checkFail();
    if (before !== 'ok') return before === 'open' ? DataStatus.Continue : DataStatus.StopIterationNoBuffer;
    if (!this.vm.has(callback)) return DataStatus.Continue;
    return this.vm.withAfterCallActions(() => {
      const raw = this.vm.callWord(this, callback, this.id, size, endOfStream ? 1 : 0);
      const after = this.checkFail();
      if (after !== 'ok') return after === 'open' ? DataStatus.Continue : DataStatus.StopIterationNoBuffer;
      return dataStatus(raw, this.vm.stopIteration);
    });
  }

  /** cpp-host CHECK_FAIL: fail-open bypasses; fail-closed answers 503 once per stream. */
  protected checkFail(): 'ok' | 'open' | 'closed' {
    if (!this.failed) return 'ok';
    if (this.plugin.failurePolicy === 'FAIL_OPEN') return 'open';
    if (!this.streamFailed) {
      this.streamFailed = true;
      this.sendReply(failStreamReply(), false); // Envoy failStream: never through the failed VM
      this.failureLocalReplySent = true;
    }
    return 'closed';
  }

  protected callIfAlive(name: 'proxy_on_log' | 'proxy_on_done' | 'proxy_on_delete'): void {
    if (this.failed || !this.vm.has(name)) return;
    try {
      if (name === 'proxy_on_done') this.vm.callWord(this, name, this.id);
      else this.vm.callVoid(this, name, this.id);
    } finally {
      this.vm.afterCallActions();
    }
  }
}
