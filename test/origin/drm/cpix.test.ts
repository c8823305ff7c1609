// The CPIX reader and its usage rules: the hand-written 2.2 and 2.3 fixtures validate against the
// DASH-IF schemas (xmllint, offline) and parse to their keys, systems and rules; every rule type is
// evaluated as CPIX 2.3 defines it; and everything this origin does not take (signed or encrypted
// documents, key rotation, rules it cannot evaluate) is refused naming the element, including
// documents the schema accepts.

import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseCpix, CpixDocument } from '../../../origin/drm/cpix';
import { keysOfTracks, matches } from '../../../origin/drm/cpix-rules';
import { uuidString } from '../../../origin/drm/systems';
import type { TrackProperties } from '../../../origin/model/media';
import { ROOT, tempDir } from '../../helpers/fixtures';
import { runSync } from '../../helpers/process';

const FIXTURES = path.join(ROOT, 'fixtures', 'cpix');
/**
 * The DASH-IF CPIX schemas (cpix-2.2.xsd, cpix-2.3.xsd and the PSKC, XML Signature and XML
 * Encryption schemas they import): not in the repository, which commits no third-party files it
 * did not write; the validation runs where CPIX_SCHEMA_DIR names a directory holding them
 * (fixtures/cpix/README.md).
 */
const SCHEMAS = process.env.CPIX_SCHEMA_DIR;
const V22 = readFileSync(path.join(FIXTURES, 'three-keys-2.2.xml'), 'utf8');
const V23 = readFileSync(path.join(FIXTURES, 'three-keys-2.3.xml'), 'utf8');
const SD = 'd95627cf-a966-471b-ae89-ace6822b4664';
const HD = 'dd96304a-2eea-41e3-8192-6c9010625a8b';
const AUDIO = 'baaf5c50-5515-4ef6-98aa-454752aeb3b6';
const dir = tempDir('cpix-');

/** xmllint's verdict on a document against the CPIX schema of `version`. */
function validate(xml: string, version: '2.2' | '2.3'): { ok: boolean; output: string } {
  const file = path.join(dir, `doc-${Math.random().toString(36).slice(2)}.xml`);
  writeFileSync(file, xml);
  const r = runSync('xmllint', ['--noout', '--nonet', '--schema', path.join(SCHEMAS!, `cpix-${version}.xsd`), file]);
  return { ok: r.code === 0, output: r.stderr };
}

const refusal = (text: string): string => {
  try {
    parseCpix(text, 'doc.xml');
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('not refused');
};

function track(p: Partial<TrackProperties>): TrackProperties {
  return {
    type: 'video',
    FourCC: 'AVC1',
    trackID: 1,
    trackName: 'video_eng',
    systemBitrate: 400_000,
    systemLanguage: 'eng',
    TimeScale: 10_000_000,
    CodecPrivateData: '',
    codecs: 'avc1.42c01e',
    sampleEntry: 'avc1',
    ...p,
  };
}

const video = (w: number, h: number, bitrate = 400_000, fps = 24): TrackProperties =>
  track({ MaxWidth: w, MaxHeight: h, systemBitrate: bitrate, FrameRate: { num: fps, den: 1 } });
const audio = (channels: number, name = 'audio_eng'): TrackProperties =>
  track({ type: 'audio', trackName: name, Channels: channels, FourCC: 'AACL', sampleEntry: 'mp4a' });

function kidsOf(doc: CpixDocument, tracks: TrackProperties[]): Array<string | undefined> {
  return keysOfTracks(
    doc,
    tracks.map((properties, i) => ({ properties, describe: `track #${i}` })),
    'doc.xml',
  ).map((k) => (k === undefined ? undefined : uuidString(k.kid)));
}

describe('the fixtures', () => {
  (SCHEMAS === undefined ? test.skip : test)(
    'validate against their CPIX schema with xmllint, offline (CPIX_SCHEMA_DIR)',
    () => {
      expect(validate(V22, '2.2')).toEqual({ ok: true, output: expect.stringContaining('validates') });
      expect(validate(V23, '2.3')).toEqual({ ok: true, output: expect.stringContaining('validates') });
      // Negative control: the 2.3 document uses what 2.2 does not have.
      const against22 = validate(V23, '2.2');
      expect(against22.ok).toBe(false);
      expect(against22.output).toContain(
        "attribute 'commonEncryptionScheme': The attribute 'commonEncryptionScheme' is not allowed",
      );
    },
  );

  test('2.2: three plain keys, drm_a PSSH given, ClearKey, pixel and audio rules', () => {
    const doc = parseCpix(V22, 'three-keys-2.2.xml');
    expect(doc.version).toBeUndefined();
    expect(doc.keys.map((k) => [uuidString(k.kid), Buffer.from(k.cek!).toString('hex'), k.scheme])).toEqual([
      [SD, 'b965b4fa4448c37c73369bd4c0c94503', undefined],
      [HD, '447c67908a887b0e7765bc7d1de9b01a', undefined],
      [AUDIO, '7d3a00433864636bcf0c072bf9a3ef0b', undefined],
    ]);
    expect(doc.systems.map((s) => [s.systemId.slice(0, 8), uuidString(s.kid).slice(0, 4), s.pssh?.byteLength])).toEqual(
      [
        ['edef8ba9', 'd956', 76],
        ['edef8ba9', 'dd96', 76],
        ['edef8ba9', 'baaf', 76],
        ['e2719d58', 'd956', undefined],
        ['e2719d58', 'dd96', undefined],
        ['e2719d58', 'baaf', undefined],
      ],
    );
    expect(doc.rules!.map((r) => [r.position, r.intendedTrackType, r.video, r.audio])).toEqual([
      [1, 'SD', [{ maxPixels: 589824 }], []],
      [2, 'HD', [{ minPixels: 589825 }], []],
      [3, 'AUDIO', [], [{}]],
    ]);
  });

  test('2.3: version, commonEncryptionScheme, bitrate, frame rate and label filters, a PlayReady PSSH', () => {
    const doc = parseCpix(V23, 'three-keys-2.3.xml');
    expect(doc.version).toBe('2.3');
    expect(doc.keys.map((k) => k.scheme)).toEqual(['cbcs', 'cbcs', 'cbcs']);
    expect(doc.systems.filter((s) => s.pssh !== undefined).map((s) => [s.systemId, uuidString(s.kid)])).toEqual([
      ['9a04f079-9840-4286-ab92-e65be0885f95', HD],
    ]);
    const [sd, hd, au] = doc.rules!;
    expect([sd!.video, sd!.bitrate]).toEqual([[{ maxPixels: 589824 }], [{ maxBitrate: 1000000 }]]);
    expect(hd!.video).toEqual([{ minPixels: 589825, maxFps: 30 }]);
    expect([au!.labels, au!.audio]).toEqual([['audio_eng', 'audio_nld'], [{ maxChannels: 2 }]]);
  });

  test('a byte order mark before the declaration is taken', () => {
    expect(parseCpix(`\uFEFF${V22}`, 'doc').keys).toHaveLength(3);
  });

  test("each fixture gives the fixture presentation's SD, HD and audio tracks their keys", () => {
    // The fixture media (fixtures/README.md): 512x288 410 kbit/s, 640x360 926 kbit/s, 1280x720
    // 1652 kbit/s at 24 fps; AAC stereo in English and Dutch; TTML.
    const tracks = [
      video(512, 288, 410_594),
      video(640, 360, 925_835),
      video(1280, 720, 1_651_699),
      audio(2),
      audio(2, 'audio_nld'),
      track({ type: 'textstream', trackName: 'textstream_eng' }),
    ];
    for (const text of [V22, V23]) {
      expect(kidsOf(parseCpix(text, 'doc'), tracks)).toEqual([SD, SD, HD, AUDIO, AUDIO, undefined]);
    }
  });
});

describe('usage rules (CPIX 2.3, Usage Rules Filters)', () => {
  const rule = (filters: string): CpixDocument =>
    parseCpix(
      `<CPIX xmlns="urn:dashif:org:cpix"><ContentKeyList><ContentKey kid="${SD}"/></ContentKeyList>` +
        `<ContentKeyUsageRuleList><ContentKeyUsageRule kid="${SD}">${filters}</ContentKeyUsageRule></ContentKeyUsageRuleList></CPIX>`,
      'doc',
    );
  const hit = (filters: string, p: TrackProperties): boolean => matches(rule(filters).rules![0]!, p);

  test('VideoFilter: pixels in [min, max], frame rate in (minFps, maxFps], video only', () => {
    expect(hit('<VideoFilter maxPixels="589824"/>', video(1024, 576))).toBe(true);
    expect(hit('<VideoFilter maxPixels="589823"/>', video(1024, 576))).toBe(false);
    expect(hit('<VideoFilter minPixels="589824"/>', video(1024, 576))).toBe(true);
    expect(hit('<VideoFilter minFps="24"/>', video(640, 360, 1, 24))).toBe(false);
    expect(hit('<VideoFilter minFps="24" maxFps="30"/>', video(640, 360, 1, 25))).toBe(true);
    expect(hit('<VideoFilter maxFps="24"/>', video(640, 360, 1, 24))).toBe(true);
    expect(hit('<VideoFilter/>', audio(2))).toBe(false);
    expect(hit('<VideoFilter/>', video(640, 360))).toBe(true);
  });

  test('AudioFilter: channels in [min, max], audio only', () => {
    expect(hit('<AudioFilter maxChannels="2"/>', audio(2))).toBe(true);
    expect(hit('<AudioFilter maxChannels="2"/>', audio(6))).toBe(false);
    expect(hit('<AudioFilter minChannels="3"/>', audio(6))).toBe(true);
    expect(hit('<AudioFilter/>', video(640, 360))).toBe(false);
  });

  test('BitrateFilter: systemBitrate in [min, max], any type', () => {
    expect(hit('<BitrateFilter maxBitrate="400000"/>', video(640, 360, 400_000))).toBe(true);
    expect(hit('<BitrateFilter maxBitrate="399999"/>', video(640, 360, 400_000))).toBe(false);
    expect(hit('<BitrateFilter minBitrate="100000"/>', audio(2))).toBe(true); // audio at 400 kbit/s (track())
    expect(hit('<BitrateFilter minBitrate="100000" maxBitrate="200000"/>', audio(2))).toBe(false);
  });

  test('LabelFilter: the track name; several of one type ORed, types ANDed', () => {
    expect(hit('<LabelFilter label="audio_nld"/>', audio(2, 'audio_nld'))).toBe(true);
    expect(hit('<LabelFilter label="audio_eng"/><LabelFilter label="audio_nld"/>', audio(2, 'audio_nld'))).toBe(true);
    expect(hit('<LabelFilter label="audio_eng"/>', audio(2, 'audio_nld'))).toBe(false);
    expect(hit('<LabelFilter label="audio_nld"/><AudioFilter minChannels="6"/>', audio(2, 'audio_nld'))).toBe(false);
  });

  test('a rule without filters matches every track; intendedTrackType never selects', () => {
    const doc = parseCpix(
      `<CPIX xmlns="urn:dashif:org:cpix"><ContentKeyList><ContentKey kid="${SD}"><Data><Secret xmlns="urn:ietf:params:xml:ns:keyprov:pskc"><PlainValue>uWW0+kRIw3xzNpvUwMlFAw==</PlainValue></Secret></Data></ContentKey></ContentKeyList>` +
        `<ContentKeyUsageRuleList><ContentKeyUsageRule kid="${SD}" intendedTrackType="AUDIO"/></ContentKeyUsageRuleList></CPIX>`,
      'doc',
    );
    expect(kidsOf(doc, [video(1920, 1080), audio(6)])).toEqual([SD, SD]);
  });
});

describe('track selection', () => {
  const doc = parseCpix(V22, 'doc');
  const message = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error('not refused');
  };

  test('a track no rule matches is an error naming it and what the filters compare', () => {
    const noAudioRule = parseCpix(V22.replace(/<cpix:AudioFilter \/>/, '<cpix:AudioFilter minChannels="6" />'), 'doc');
    expect(message(() => kidsOf(noAudioRule, [video(640, 360), audio(2)]))).toBe(
      'doc.xml: no <ContentKeyUsageRule> matches track #1 (audio, name audio_eng, 400000 bit/s, 2 channels): every audio and video track needs a key',
    );
  });

  test('a track two rules give different keys is an error naming both rules', () => {
    const overlapping = parseCpix(V22.replace('minPixels="589825"', 'minPixels="500000"'), 'doc');
    expect(message(() => kidsOf(overlapping, [video(1024, 576)]))).toBe(
      `doc.xml: <ContentKeyUsageRule> #1 (kid ${SD}) and #2 (kid ${HD}) both match track #0 (video, name video_eng, 400000 bit/s, 1024x576 = 589824 pixels, 24 fps): a track takes one key`,
    );
    // Two rules with the same key are fine (the specification's advice for a key of two track types).
    const twice = parseCpix(
      V22.replace(`kid="${HD}" intendedTrackType="HD"`, `kid="${SD}" intendedTrackType="HD"`),
      'doc',
    );
    expect(kidsOf(twice, [video(1920, 1080)])).toEqual([SD]);
  });

  test('the selected key must have a value; several keys need rules', () => {
    const valueless = parseCpix(
      V22.replace(
        /<cpix:Data>\s*<pskc:Secret>\s*<pskc:PlainValue>uWW0[^<]*<\/pskc:PlainValue>\s*<\/pskc:Secret>\s*<\/cpix:Data>/,
        '',
      ),
      'doc',
    );
    expect(message(() => kidsOf(valueless, [video(640, 360)]))).toBe(
      `doc.xml: <ContentKey kid="${SD}">, the key of track #0, has no <pskc:PlainValue>`,
    );
    expect(kidsOf(valueless, [video(1280, 720)])).toEqual([HD]); // a key no track uses may lack one
    const noRules = parseCpix(
      V22.replace(/<cpix:ContentKeyUsageRuleList>[\s\S]*<\/cpix:ContentKeyUsageRuleList>/, ''),
      'doc',
    );
    expect(message(() => kidsOf(noRules, [video(640, 360)]))).toBe(
      'doc.xml: 3 content keys and no <ContentKeyUsageRuleList>: the document does not say which track takes which key',
    );
  });

  test('one key and no rules: every audio and video track takes it', () => {
    const one = parseCpix(
      V22.replace(/<cpix:ContentKeyUsageRuleList>[\s\S]*<\/cpix:ContentKeyUsageRuleList>/, '')
        .replace(/<cpix:DRMSystemList>[\s\S]*<\/cpix:DRMSystemList>/, '')
        .replace(/<cpix:ContentKey kid="dd96[\s\S]*?<\/cpix:ContentKey>/, '')
        .replace(/<cpix:ContentKey kid="baaf[\s\S]*?<\/cpix:ContentKey>/, ''),
      'doc',
    );
    expect(kidsOf(one, [video(1920, 1080), audio(6), track({ type: 'textstream' })])).toEqual([SD, SD, undefined]);
    expect(doc.rules).toHaveLength(3);
  });
});

describe('refused, naming what (each valid against the schema where the schema allows it)', () => {
  const DS = 'xmlns:ds="http://www.w3.org/2000/09/xmldsig#"';
  const SIGNATURE =
    `<ds:Signature ${DS}><ds:SignedInfo>` +
    '<ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>' +
    '<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>' +
    '<ds:Reference URI=""><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue>AAAA</ds:DigestValue></ds:Reference>' +
    '</ds:SignedInfo><ds:SignatureValue>AAAA</ds:SignatureValue></ds:Signature>';
  const ENCRYPTED =
    '<pskc:EncryptedValue xmlns:xenc="http://www.w3.org/2001/04/xmlenc#">' +
    '<xenc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes256-cbc"/>' +
    '<xenc:CipherData><xenc:CipherValue>AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=</xenc:CipherValue></xenc:CipherData>' +
    '</pskc:EncryptedValue>';
  const DELIVERY =
    `<cpix:DeliveryDataList><cpix:DeliveryData><cpix:DeliveryKey ${DS}><ds:X509Data><ds:X509Certificate>AAAA</ds:X509Certificate></ds:X509Data></cpix:DeliveryKey>` +
    `<cpix:DocumentKey Algorithm="http://www.w3.org/2001/04/xmlenc#aes256-cbc"><cpix:Data><pskc:Secret>${ENCRYPTED}</pskc:Secret></cpix:Data></cpix:DocumentKey>` +
    '</cpix:DeliveryData></cpix:DeliveryDataList>';
  const PERIODS = '<ContentKeyPeriodList><ContentKeyPeriod id="p1" index="1" /></ContentKeyPeriodList>';
  const SD_VALUE = /<pskc:PlainValue>uWW0\+kRIw3xzNpvUwMlFAw==<\/pskc:PlainValue>/;

  const cases: Array<[string, string, string | undefined, string]> = [
    [
      'a signed document',
      V22.replace('</cpix:CPIX>', `${SIGNATURE}</cpix:CPIX>`),
      '2.2',
      'signed CPIX documents are not supported (<ds:Signature>): fetch the document over HTTPS instead',
    ],
    [
      'an encrypted key',
      V22.replace(SD_VALUE, ENCRYPTED),
      '2.2',
      `<ContentKey kid="${SD}">: the key is encrypted (<pskc:EncryptedValue>); only plain keys (<pskc:PlainValue>) are supported`,
    ],
    [
      'an encrypted document (DeliveryDataList)',
      V22.replace('<cpix:ContentKeyList>', `${DELIVERY}<cpix:ContentKeyList>`),
      '2.2',
      'encrypted CPIX documents are not supported (<DeliveryDataList>): give the content keys as PlainValue',
    ],
    [
      'key periods',
      V23.replace('<ContentKeyUsageRuleList>', `${PERIODS}<ContentKeyUsageRuleList>`).replace(
        '<VideoFilter minPixels="589825" maxFps="30" />',
        '<KeyPeriodFilter periodId="p1" /><VideoFilter minPixels="589825" maxFps="30" />',
      ),
      '2.3', // 2.2 types KeyPeriodFilter@periodId as an ID, not a reference (fixed in 2.3)
      '<ContentKeyPeriodList>: key periods (key rotation) are not supported; one key per track for the whole presentation',
    ],
    [
      'a KeyPeriodFilter',
      V22.replace('<cpix:AudioFilter />', '<cpix:KeyPeriodFilter periodId="p1" /><cpix:AudioFilter />'),
      undefined, // its periodId must refer to a period: only the list makes it valid (above)
      `<ContentKeyUsageRule> #3 (kid="${AUDIO}"): <KeyPeriodFilter> means key rotation, which is not supported`,
    ],
    [
      'VideoFilter@hdr',
      V22.replace('<cpix:VideoFilter minPixels="589825" />', '<cpix:VideoFilter minPixels="589825" hdr="true" />'),
      '2.2',
      `<ContentKeyUsageRule> #2 (kid="${HD}"): <VideoFilter hdr="…"> cannot be evaluated here (the origin knows only minPixels, maxPixels, minFps, maxFps)`,
    ],
    [
      'a filter of another namespace',
      V22.replace(
        '<cpix:AudioFilter />',
        '<cpix:AudioFilter /><x:RobustnessFilter xmlns:x="urn:example" level="L1" />',
      ),
      '2.2',
      `<ContentKeyUsageRule> #3 (kid="${AUDIO}"): <RobustnessFilter> is a filter this origin cannot evaluate, so no key can be mapped to a track`,
    ],
    [
      'a BitrateFilter without bounds',
      V22.replace('<cpix:AudioFilter />', '<cpix:AudioFilter /><cpix:BitrateFilter />'),
      '2.2',
      `<ContentKeyUsageRule> #3 (kid="${AUDIO}"): <BitrateFilter> needs minBitrate or maxBitrate`,
    ],
    [
      'a key hierarchy',
      V22.replace(`<cpix:ContentKey kid="${HD}">`, `<cpix:ContentKey kid="${HD}" dependsOnKey="${SD}">`),
      '2.2',
      `<ContentKey kid="${HD}">: key hierarchies (@dependsOnKey) are not supported`,
    ],
    [
      'a scheme this origin does not write',
      V23.replace('commonEncryptionScheme="cbcs"', 'commonEncryptionScheme="cens"'),
      '2.3',
      `<ContentKey kid="${SD}">: commonEncryptionScheme="cens" is not written by this origin (cenc, cbcs)`,
    ],
    [
      'a key of 15 bytes',
      V22.replace(SD_VALUE, '<pskc:PlainValue>uWW0+kRIw3xzNpvUwMlF</pskc:PlainValue>'),
      '2.2',
      `<ContentKey kid="${SD}">: the key is 15 bytes, not 16 (AES-128)`,
    ],
    [
      'a DRMSystem of an unknown key',
      V22.replace(
        `systemId="e2719d58-a985-b3c9-781a-b030af78d30e" kid="${SD}"`,
        'systemId="e2719d58-a985-b3c9-781a-b030af78d30e" kid="00000000-0000-0000-0000-000000000001"',
      ),
      '2.2',
      '<DRMSystem systemId="e2719d58-a985-b3c9-781a-b030af78d30e" kid="00000000-0000-0000-0000-000000000001"> names kid="00000000-0000-0000-0000-000000000001", which no <ContentKey> has',
    ],
    [
      'a PSSH of another system',
      V22.replace('systemId="edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"', 'systemId="9a04f079-9840-4286-ab92-e65be0885f95"'),
      '2.2',
      `<DRMSystem systemId="9a04f079-9840-4286-ab92-e65be0885f95" kid="${SD}">: <PSSH> is not a whole pssh box of that system id (ISO/IEC 23001-7 §8.1)`,
    ],
    [
      'a kid that is not a UUID',
      V22.replace(`<cpix:ContentKey kid="${SD}">`, '<cpix:ContentKey kid="d95627cfa966471bae89ace6822b4664">'),
      undefined, // 2.2 allows any string; 2.3 asks for a UUID
      '<ContentKey>: kid="d95627cfa966471bae89ace6822b4664" is not a UUID (8-4-4-4-12 hexadecimal digits)',
    ],
    [
      'two keys with one kid',
      V22.replace(`kid="${HD}">`, `kid="${SD}">`),
      undefined,
      `two <ContentKey> elements have kid="${SD}"`,
    ],
    ['CPIX 3', V23.replace('version="2.3"', 'version="3.0"'), '2.3', 'CPIX version "3.0" is not supported (2.2, 2.3)'],
    [
      'another root',
      '<MPD xmlns="urn:mpeg:dash:schema:mpd:2011"/>',
      undefined,
      'the root element is <MPD> (namespace urn:mpeg:dash:schema:mpd:2011), not <CPIX> of urn:dashif:org:cpix',
    ],
    [
      'no namespace',
      '<CPIX/>',
      undefined,
      'the root element is <CPIX> (namespace none), not <CPIX> of urn:dashif:org:cpix',
    ],
    ['an undeclared prefix', '<cpix:CPIX/>', undefined, '<cpix:CPIX>: the prefix cpix is not declared'],
    [
      'a DOCTYPE',
      '<!DOCTYPE x [<!ENTITY a "b">]><CPIX xmlns="urn:dashif:org:cpix"/>',
      undefined,
      'a document type declaration (<!DOCTYPE>) is not accepted in a CPIX document',
    ],
    ['malformed XML', V22.replace('</cpix:ContentKeyList>', ''), undefined, 'not well-formed XML at line'],
  ];

  test.each(cases)('%s', (_name, text, schema, why) => {
    // Schema-valid where the schema allows it (checked where the schemas are, CPIX_SCHEMA_DIR).
    if (schema !== undefined && SCHEMAS !== undefined) {
      expect(validate(text, schema as '2.2' | '2.3')).toEqual({
        ok: true,
        output: expect.stringContaining('validates'),
      });
    }
    const m = refusal(text);
    expect(m).toContain(`doc.xml: ${why}`);
    // Never a key value in a message, whatever the document says.
    for (const secret of ['uWW0+kRIw3xzNpvUwMlFAw==', 'b965b4fa4448c37c73369bd4c0c94503', 'RHxnkIqIew53Zbx9HemwGg==']) {
      expect(m).not.toContain(secret);
    }
  });
});
