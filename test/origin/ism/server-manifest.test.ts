import { ismTrackToProperties, propertiesToIsmTrack } from '../../../origin/ism/ism-tracks';
import { parseServerManifest, ServerManifest, writeServerManifest } from '../../../origin/ism/server-manifest';
import { OriginError } from '../../../origin/errors';
import { optionsFromManifest } from '../../../origin/options/registry';
import { rational } from '../../../origin/rational';
import { comparable } from '../../helpers/expected';

const SAR_CPD = '00000001674D401EECA0F05FF2E1C200000300020000030061C04003D08000F427251803C58B65800000000168EFBC80';
const INTERLACED_CPD = '000000016764001EACD940B424D80880000003008000001972400186A0030D7251807C50A6580000000168FEBCB0';

// The reference product's own layout (unifiedstreaming/ltm-edge: USP 1.7.4 ts.ism, and the audio
// element of a USP 1.11.3 .ism), filled with the fixtures' values.
const REFERENCE_SHAPE = `<?xml version="1.0" encoding="utf-8"?>
<!-- Created with Unified Streaming Platform(version=1.7.4) -->
<smil xmlns="http://www.w3.org/2001/SMIL20/Language">
  <head>
    <meta name="clientManifestRelativePath" content="fixtures.ismc" />
    <meta name="creator" content="Unified Streaming Platform (USP)" />
  </head>
  <body>
    <switch>
      <video src="video_sar_500k.ismv" systemBitrate="514358" systemLanguage="eng">
        <param name="trackID" value="1" valueType="data" />
        <param name="trackName" value="video_eng" valueType="data" />
        <param name="MaxWidth" value="480" valueType="data" />
        <param name="MaxHeight" value="360" valueType="data" />
        <param name="DisplayWidth" value="640" valueType="data" />
        <param name="DisplayHeight" value="360" valueType="data" />
        <param name="FourCC" value="AVC1" valueType="data" />
        <param name="CodecPrivateData" value="${SAR_CPD}" valueType="data" />
      </video>
      <audio src="audio_eng_64k.isma" systemBitrate="64113" systemLanguage="eng">
        <param name="trackID" value="1" valueType="data" />
        <param name="TimeScale" value="10000000" valueType="data" />
        <param name="SamplingRate" value="48000" valueType="data" />
        <param name="Channels" value="2" valueType="data" />
        <param name="BitsPerSample" value="16" valueType="data" />
        <param name="PacketSize" value="4" valueType="data" />
        <param name="AudioTag" value="255" valueType="data" />
        <param name="FourCC" value="AACL" valueType="data" />
        <param name="CodecPrivateData" value="119056E500" valueType="data" />
      </audio>
    </switch>
  </body>
</smil>
`;

describe('a server manifest in the reference product’s shape', () => {
  const m = parseServerManifest(REFERENCE_SHAPE, 'reference.ism');

  test('loads with its metas and tracks keyed by (src, trackID)', () => {
    expect(m.meta).toEqual([
      { name: 'clientManifestRelativePath', content: 'fixtures.ismc' },
      { name: 'creator', content: 'Unified Streaming Platform (USP)' },
    ]);
    expect(m.tracks.map((t) => [t.element, t.src, t.systemBitrate, t.systemLanguage])).toEqual([
      ['video', 'video_sar_500k.ismv', 514358, 'eng'],
      ['audio', 'audio_eng_64k.isma', 64113, 'eng'],
    ]);
    // Metas that are not stream options (creator, ...) do not upset option parsing.
    expect(optionsFromManifest(m.meta, 'reference.ism').entries()).toEqual([]);
  });

  test('properties it leaves out are derived from CodecPrivateData', () => {
    const video = comparable(ismTrackToProperties(m.tracks[0]!, 0));
    expect(video).toMatchObject({
      type: 'video',
      FourCC: 'AVC1',
      trackID: 1,
      trackName: 'video_eng',
      TimeScale: 10_000_000,
      MaxWidth: 480,
      MaxHeight: 360,
      DisplayWidth: 640,
      DisplayHeight: 360,
      avc_profile: 77,
      avc_level: 30,
      ScanType: 'progressive',
      FrameRate: '24',
      codecs: 'avc1.4D401E',
      systemBitrate: 514358,
    });
    const audio = ismTrackToProperties(m.tracks[1]!, 1);
    expect(audio).toMatchObject({
      type: 'audio',
      FourCC: 'AACL',
      trackName: 'audio_eng',
      Channels: 2,
      SamplingRate: 48000,
      AudioTag: 255,
      codecs: 'mp4a.40.2',
    });
  });
});

test('the MS spelling valuetype is accepted; unknown attributes and params survive', () => {
  const text = `<smil xmlns="http://www.w3.org/2001/SMIL20/Language"><body><switch>
    <video src="a.ismv" systemBitrate="100" systemLanguage="nld" title="x &amp; y">
      <param name="trackID" value="2" valuetype="data"/>
      <param name="FourCC" value="AVC1" valuetype="data"/>
      <param name="CodecPrivateData" value="${INTERLACED_CPD}" valuetype="data"/>
      <param name="Custom" value="kept"/>
    </video></switch></body></smil>`;
  const m = parseServerManifest(text);
  expect(m.tracks[0]!.params[0]).toEqual({ name: 'trackID', value: '2', valueType: 'data' });
  expect(m.tracks[0]!.extraAttributes).toEqual([['title', 'x & y']]);
  const p = ismTrackToProperties(m.tracks[0]!, 0);
  expect(p).toMatchObject({
    trackID: 2,
    trackName: 'video_nld',
    ScanType: 'interlaced',
    avc_profile: 100,
    MaxWidth: 720,
    MaxHeight: 576,
    FrameRate: rational(25, 1),
  });
  const again = parseServerManifest(writeServerManifest(m, 'test'));
  expect(again).toEqual(m);
});

describe('round trip parse → write → parse is lossless', () => {
  const rich: ServerManifest = {
    meta: [
      { name: 'hls_client_manifest_version', content: '4' },
      { name: 'variant_set', content: 'type=="video" && systemBitrate<800000' },
      { name: 'variant_set', content: 'true' },
      { name: 'note', content: 'quotes " and <angle> & ampersand\nnewline\ttab' },
    ],
    paramGroups: [{ id: 'hls', meta: [{ name: 'key', content: ':00112233445566778899AABBCCDDEEFF' }] }],
    tracks: [
      propertiesToIsmTrack(
        {
          type: 'video',
          FourCC: 'AVC1',
          trackID: 1,
          trackName: 'video_eng',
          systemBitrate: 618174,
          systemLanguage: 'eng',
          TimeScale: 10_000_000,
          CodecPrivateData: SAR_CPD,
          codecs: 'avc1.4D401E',
          sampleEntry: 'avc1',
          MaxWidth: 640,
          MaxHeight: 360,
          DisplayWidth: 640,
          DisplayHeight: 360,
          FrameRate: rational(30000, 1001),
          ScanType: 'progressive',
          avc_profile: 77,
          avc_level: 30,
        },
        'media dir/video ü.ismv',
      ),
      {
        element: 'textstream',
        src: 'text_eng.ismt',
        systemBitrate: 1549,
        systemLanguage: undefined,
        extraAttributes: [],
        params: [
          { name: 'trackID', value: '1', valueType: undefined },
          { name: 'FourCC', value: 'TTML', valueType: 'data' },
        ],
      },
    ],
  };

  test('model → text → model', () => {
    const text = writeServerManifest(rich, 'Streaming Origin (version=test)');
    expect(parseServerManifest(text)).toEqual(rich);
    // and text → model → text is a fixed point
    expect(writeServerManifest(parseServerManifest(text), 'Streaming Origin (version=test)')).toBe(text);
  });

  test('the rational frame rate survives as a param', () => {
    const back = ismTrackToProperties(parseServerManifest(writeServerManifest(rich, 'x')).tracks[0]!, 0);
    expect(back.FrameRate).toEqual({ num: 30000, den: 1001 });
  });
});

describe('bad server manifests are reported with where and why', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['not XML', 'hello', /not a server manifest|not well-formed/],
    ['broken XML', '<smil><head></smil>', /line 1, column \d+/],
    ['wrong root', '<html/>', /no <smil> root element/],
    [
      'no src',
      '<smil><body><switch><video systemBitrate="1"/></switch></body></smil>',
      /<video> #1 has no src attribute/,
    ],
    [
      'bad bitrate',
      '<smil><body><switch><audio src="a.isma" systemBitrate="fast"/></switch></body></smil>',
      /systemBitrate "fast" is not a non-negative integer/,
    ],
    [
      'param without name',
      '<smil><body><switch><audio src="a.isma" systemBitrate="1"><param value="1"/></audio></switch></body></smil>',
      /<param> without name/,
    ],
    [
      // Found by the hardening corpus: the parser's own error escaped as a 500 `internal`.
      'an external entity (never read)',
      '<!DOCTYPE smil [<!ENTITY x SYSTEM "file:///etc/passwd">]><smil><head><meta name="x" content="&x;"/></head></smil>',
      /not a server manifest the origin reads: External entities are not supported/,
    ],
  ];
  test.each(cases)('%s', (_name, text, message) => {
    let error: unknown;
    try {
      parseServerManifest(text, 'bad.ism');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OriginError);
    expect((error as OriginError).kind).toBe('bad-request');
    expect((error as Error).message).toMatch(/^bad\.ism: /);
    expect((error as Error).message).toMatch(message);
  });

  test('track params with bad values name the track and param', () => {
    const m = parseServerManifest(
      '<smil><body><switch><video src="v.ismv" systemBitrate="1"><param name="trackID" value="one"/><param name="FourCC" value="AVC1"/></video></switch></body></smil>',
    );
    expect(() => ismTrackToProperties(m.tracks[0]!, 0)).toThrow(
      '<video> #1 (src="v.ismv"): param trackID="one" is not an integer',
    );
    const noFourcc = parseServerManifest(
      '<smil><body><switch><video src="v.ismv" systemBitrate="1"><param name="trackID" value="1"/></video></switch></body></smil>',
    );
    expect(() => ismTrackToProperties(noFourcc.tracks[0]!, 0)).toThrow(/no FourCC param/);
    const badRate = parseServerManifest(
      '<smil><body><switch><video src="v.ismv" systemBitrate="1"><param name="trackID" value="1"/><param name="FourCC" value="AVC1"/><param name="FrameRate" value="fast"/></video></switch></body></smil>',
    );
    expect(() => ismTrackToProperties(badRate.tracks[0]!, 0)).toThrow(/FrameRate="fast"/);
  });
});
