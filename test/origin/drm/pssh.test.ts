// pssh boxes and the system data we write ourselves (origin/drm/pssh.ts): layouts of ISO/IEC
// 23001-7 §8.1, the PlayReady header's little-endian GUID (the notes' worked example), and the
// checksum a PlayReady client verifies the key with.

import { createCipheriv } from 'node:crypto';
import { drmAPsshData, guidLittleEndian, playReadyObject, psshBox, psshData } from '../../../origin/drm/pssh';
import { COMMON, DRM_A, PLAYREADY } from '../../../origin/drm/systems';

const KID = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
const KEY = Buffer.from('3a2a1b68dd2bd9b2eeb25e84c4776668', 'hex');

test('the W3C Common PSSH: version 1, one KID, no data, 52 bytes', () => {
  const box = Buffer.from(psshBox(COMMON, new Uint8Array(0), [KID]));
  expect(box.length).toBe(52);
  expect(box.toString('hex')).toBe(
    '00000034' +
      '70737368' +
      '01000000' +
      '1077efecc0b24d02ace33c1e52e2fb4b' +
      '00000001' +
      KID.toString('hex') +
      '00000000',
  );
});

test('a version 0 box: system id, data size, data', () => {
  const box = Buffer.from(psshBox(DRM_A, Uint8Array.of(1, 2, 3)));
  expect(box.toString('hex')).toBe(
    '00000023' + '70737368' + '00000000' + 'edef8ba979d64acea3c827dcd51d21ed' + '00000003' + '010203',
  );
});

test("drm_a's data: key_id (field 2) and protection_scheme (field 9) as protobuf", () => {
  const data = Buffer.from(drmAPsshData([KID], 'cenc'));
  // 0x12 = field 2, length-delimited; 0x48 = field 9, varint; 'cenc' = 0x63656e63 = 1667591779.
  expect(data.toString('hex')).toBe('1210' + KID.toString('hex') + '48' + 'e3dc959b06');
  expect(
    Buffer.from(drmAPsshData([KID], 'cbcs'))
      .subarray(18)
      .toString('hex'),
  ).toBe('48f3c6899b06');
});

test("drm_a's data with several keys: one key_id field each, as shaka-packager writes it", () => {
  // shaka-packager 3.4.2, raw keys labelled SD, HD, AUDIO (KIDs 11…, 22…, 33…), cenc: its
  // edef8ba9 pssh data is EhAzMzMz…SOPclZsG, the KIDs in the order it listed them.
  const kids = ['33', '22', '11'].map((b) => Buffer.from(b.repeat(16), 'hex'));
  expect(Buffer.from(drmAPsshData(kids, 'cenc')).toString('base64')).toBe(
    'EhAzMzMzMzMzMzMzMzMzMzMzEhAiIiIiIiIiIiIiIiIiIiIiEhARERERERERERERERERERERSOPclZsG',
  );
});

test('the data of a pssh box, version 0 and 1; undefined when the sizes do not add up', () => {
  const data = Uint8Array.of(1, 2, 3);
  expect([...psshData(psshBox(DRM_A, data))!]).toEqual([1, 2, 3]);
  expect([...psshData(psshBox(DRM_A, data, [KID, KID]))!]).toEqual([1, 2, 3]);
  const box = Buffer.from(psshBox(DRM_A, data));
  expect(psshData(box.subarray(0, box.length - 1))).toBeUndefined(); // box size says one byte more
  box.writeUInt32BE(4, 28); // data size one byte past the box
  expect(psshData(box)).toBeUndefined();
});

test('PlayReady: the KID as a little-endian GUID, base64 as the notes give it', () => {
  expect(Buffer.from(guidLittleEndian(KID)).toString('base64')).toBe('MyIRAFVEd2aImaq7zN3u/w==');
});

test('the PlayReady Object: length, one record of type 1, UTF-16LE WRMHEADER 4.0 with the checksum', () => {
  const pro = Buffer.from(playReadyObject(KID, KEY, 'cenc', 'https://la.example/rightsmanager.asmx?a=1&b=2'));
  expect(pro.readUInt32LE(0)).toBe(pro.length);
  expect([pro.readUInt16LE(4), pro.readUInt16LE(6), pro.readUInt16LE(8)]).toEqual([1, 1, pro.length - 10]);
  const xml = pro.subarray(10).toString('utf16le');
  expect(xml).toMatch(
    /^<WRMHEADER xmlns="http:\/\/schemas.microsoft.com\/DRM\/2007\/03\/PlayReadyHeader" version="4.0.0.0">/,
  );
  expect(xml).toContain('<KID>MyIRAFVEd2aImaq7zN3u/w==</KID>');
  expect(xml).toContain('<LA_URL>https://la.example/rightsmanager.asmx?a=1&amp;b=2</LA_URL>');
  // CHECKSUM (PlayReady Header Specification §3.4): the first 8 bytes of the GUID encrypted with the key (AES-ECB).
  const checksum = Buffer.from(/<CHECKSUM>([^<]+)<\/CHECKSUM>/.exec(xml)![1]!, 'base64');
  const ecb = createCipheriv('aes-128-ecb', KEY, null).setAutoPadding(false);
  expect(checksum.toString('hex')).toBe(ecb.update(guidLittleEndian(KID)).subarray(0, 8).toString('hex'));
});

test('PlayReady for cbcs: WRMHEADER 4.3 with the AESCBC KID, no checksum', () => {
  const xml = Buffer.from(playReadyObject(KID, KEY, 'cbcs'))
    .subarray(10)
    .toString('utf16le');
  expect(xml).toContain('version="4.3.0.0"');
  expect(xml).toContain('<KID ALGID="AESCBC" VALUE="MyIRAFVEd2aImaq7zN3u/w=="></KID>');
  expect(xml).not.toContain('CHECKSUM');
  expect(PLAYREADY).toBe('9a04f079-9840-4286-ab92-e65be0885f95');
});
