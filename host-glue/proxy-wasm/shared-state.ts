// Shared data and shared queues (§2.3): process-wide, keyed by vm_id, like cpp-host's global
// SharedData/SharedQueue, so every VM of one vm_id (the canary, the worker, a reloaded worker)
// sees the same store. CAS numbers start at 1 and increase on every write; cas 0 writes
// unconditionally.

import { WasmResult } from './abi';

interface Entry {
  value: Uint8Array;
  cas: number;
}

const data = new Map<string, Map<string, Entry>>();
let nextCas = 1;

export function getSharedData(vmId: string, key: string): { result: WasmResult; value?: Uint8Array; cas?: number } {
  const entry = data.get(vmId)?.get(key);
  return entry === undefined
    ? { result: WasmResult.NotFound }
    : { result: WasmResult.Ok, value: entry.value, cas: entry.cas };
}

export function setSharedData(vmId: string, key: string, value: Uint8Array, cas: number): WasmResult {
  let store = data.get(vmId);
  if (store === undefined) data.set(vmId, (store = new Map()));
  const entry = store.get(key);
  if (cas !== 0 && entry !== undefined && entry.cas !== cas) return WasmResult.CasMismatch;
  store.set(key, { value, cas: nextCas++ });
  return WasmResult.Ok;
}

/** A queue's consumer: the root context that registered it, called back with on_queue_ready. */
export interface QueueOwner {
  notifyQueueReady(token: number): void;
}

interface Queue {
  items: Uint8Array[];
  owner: QueueOwner;
}

const queues = new Map<number, Queue>();
const queueTokens = new Map<string, number>();
let nextToken = 1;

const queueKey = (vmId: string, name: string): string => `${vmId}\0${name}`;

export function registerQueue(vmId: string, name: string, owner: QueueOwner): number {
  const key = queueKey(vmId, name);
  let token = queueTokens.get(key);
  if (token === undefined) queueTokens.set(key, (token = nextToken++));
  const existing = queues.get(token);
  queues.set(token, { items: existing?.items ?? [], owner });
  return token;
}

export function resolveQueue(vmId: string, name: string): number | undefined {
  return queueTokens.get(queueKey(vmId, name));
}

export function enqueue(token: number, value: Uint8Array): WasmResult {
  const queue = queues.get(token);
  if (queue === undefined) return WasmResult.NotFound;
  queue.items.push(value);
  // Envoy posts on_queue_ready to the owner's thread: never re-entrant.
  setImmediate(() => queue.owner.notifyQueueReady(token));
  return WasmResult.Ok;
}

export function dequeue(token: number): { result: WasmResult; value?: Uint8Array } {
  const queue = queues.get(token);
  if (queue === undefined) return { result: WasmResult.NotFound };
  const value = queue.items.shift();
  return value === undefined ? { result: WasmResult.Empty } : { result: WasmResult.Ok, value };
}
