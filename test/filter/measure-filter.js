// Rough cost of one evaluate() call through the wasm boundary: compile once, 20 tracks,
// 100 000 evaluations. Run: node test/filter/measure-filter.js (after the tests built
// build/filter.wasm). Not a test: timings depend on the machine.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const loader = require('@assemblyscript/loader');

const { exports: e } = loader.instantiateSync(fs.readFileSync(path.join(__dirname, '..', '..', 'build', 'filter.wasm')), {});
const names = e.__getString(e.variableNames()).split(',');
const v = (n) => names.indexOf(n);
e.clearTracks();
for (let i = 0; i < 20; i++) {
  const t = e.addTrack();
  const video = i < 10;
  e.setString(t, v('type'), e.__newString(video ? 'video' : i < 17 ? 'audio' : 'textstream'));
  e.setString(t, v('FourCC'), e.__newString(video ? 'AVC1' : i % 3 ? 'AACL' : 'ac-3'));
  e.setNumber(t, v('systemBitrate'), BigInt(100000 * (i + 1)));
  e.setString(t, v('systemLanguage'), e.__newString(i % 2 ? 'eng' : 'nld'));
  if (video) {
    e.setNumber(t, v('avc_profile'), BigInt([66, 77, 100][i % 3]));
    e.setNumber(t, v('MaxHeight'), BigInt(288 + 72 * i));
    e.setRational(t, v('FrameRate'), i % 2 ? 30000n : 25n, i % 2 ? 1001n : 1n);
  } else {
    e.setNumber(t, v('Channels'), BigInt(i % 3 ? 2 : 6));
    e.setNumber(t, v('SamplingRate'), 48000n);
  }
}
const filters = [
  'true',
  'type=="video"&&systemBitrate<=1000000',
  '(type=="video"&&avc_profile<=AVC_PROFILE_MAIN&&MaxHeight<=720&&FrameRate<=30000/1001)||(type=="audio"&&FourCC=="AACL"&&Channels==2)||type=="textstream"',
  'type=="audio"&&(FourCC=="ac-3"||count(FourCC=="ac-3")==0)',
];
for (const text of filters) {
  const h = e.compile(e.__newString(text));
  const n = 100000;
  for (let i = 0; i < 10000; i++) e.evaluate(h); // warm up
  const t0 = process.hrtime.bigint();
  let kept = 0;
  for (let i = 0; i < n; i++) kept += e.evaluate(h);
  const ns = Number(process.hrtime.bigint() - t0) / n;
  const m0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) e.evaluateMask(h);
  const nsMask = Number(process.hrtime.bigint() - m0) / n;
  console.log(`${ns.toFixed(0).padStart(5)} ns/evaluate (20 tracks, ${kept / n} kept)  ${nsMask.toFixed(0).padStart(5)} ns/evaluateMask   ${text}`);
}
const c0 = process.hrtime.bigint();
const text = e.__newString(filters[2]);
for (let i = 0; i < 10000; i++) e.release(e.compile(text));
console.log(`${(Number(process.hrtime.bigint() - c0) / 10000 / 1000).toFixed(1)} µs/compile+release of the longest filter`);
