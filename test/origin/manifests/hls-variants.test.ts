// The grouping and variant algorithm (origin/manifests/hls-variants.ts) on synthetic track lists:
// the expected variants are derived by hand from the service description's rules in each test's
// comment, plus random lists checked against the rules' invariants (fast-check).

import fc from 'fast-check';
import { OriginError } from '../../../origin/errors';
import {
  mediaGroups,
  pair,
  planVariants,
  Variant,
  VariantPlan,
  VariantTrack,
} from '../../../origin/manifests/hls-variants';
import { thrown } from '../../helpers/errors';

const aac = (kbps: number, language = 'eng', exact = kbps * 1000): VariantTrack => ({
  type: 'audio',
  fourcc: 'AACL',
  codecs: 'mp4a.40.2',
  bitrate: exact,
  language,
});
const ac3 = (kbps: number, language = 'eng'): VariantTrack => ({
  type: 'audio',
  fourcc: 'ac-3',
  codecs: 'ac-3',
  bitrate: kbps * 1000,
  language,
});
const avc = (kbps: number): VariantTrack => ({
  type: 'video',
  fourcc: 'AVC1',
  codecs: 'avc1.64001F',
  bitrate: kbps * 1000,
  language: 'und',
});
const text = (language: string): VariantTrack => ({
  type: 'textstream',
  fourcc: 'TTML',
  codecs: 'stpp.ttml.im1t',
  bitrate: 1500,
  language,
});

/** A variant as [video kbps or '-', audio group id or '-', text group id or '-'], readable in expectations. */
function readable(tracks: readonly VariantTrack[], plan: VariantPlan): string[] {
  const show = (v: Variant): string =>
    [
      v.video === undefined ? '-' : `v${tracks[v.video]!.bitrate / 1000}`,
      v.audio === undefined ? '-' : plan.groups[v.audio]!.id,
      v.text === undefined ? '-' : plan.groups[v.text]!.id,
    ].join(' ');
  return plan.variants.map(show);
}

const ALL = { audioOnly: true };

describe('groups', () => {
  test('audio of one codec and bitrate groups across languages; another bitrate or codec is another group', () => {
    const tracks = [aac(64), aac(128, 'eng', 127962), aac(128, 'nld', 127958), ac3(384), aac(128, 'fra', 128400)];
    const groups = mediaGroups(tracks);
    expect(groups.map((g) => [g.type, g.id, g.members, g.kbps])).toEqual([
      ['AUDIO', 'audio-aacl-64', [0], 64],
      // 127962, 127958 and 128400 bit/s are all 128 kbit/s: one encoding.
      ['AUDIO', 'audio-aacl-128', [1, 2, 4], 128],
      ['AUDIO', 'audio-ac-3-384', [3], 384],
    ]);
  });

  test('kbps are rounded to nearest: 127499 is 127, 127500 is 128', () => {
    const groups = mediaGroups([aac(0, 'eng', 127499), aac(0, 'nld', 127500)]);
    expect(groups.map((g) => g.id)).toEqual(['audio-aacl-127', 'audio-aacl-128']);
  });

  test('same FourCC and kbps but another codecs string (AAC-LC, HE-AAC): two groups, the second id suffixed', () => {
    const he: VariantTrack = { ...aac(64), codecs: 'mp4a.40.5' };
    expect(mediaGroups([aac(64), he, { ...he, language: 'nld' }]).map((g) => [g.id, g.members])).toEqual([
      ['audio-aacl-64', [0]],
      ['audio-aacl-64-2', [1, 2]],
    ]);
  });

  test('every text track is one SUBTITLES group (all are delivered as WebVTT); video is never grouped', () => {
    const tracks = [avc(400), text('eng'), avc(400), { ...text('nld'), codecs: 'wvtt', fourcc: 'WVTT' }];
    expect(mediaGroups(tracks).map((g) => [g.type, g.id, g.members])).toEqual([['SUBTITLES', 'textstream', [1, 3]]]);
  });

  test('DEFAULT: in each group the member in the language of the first track of that type, else the first member', () => {
    // The first audio track is Dutch: the 128k group defaults to its Dutch member although the
    // English one comes first in it; the 64k group has no Dutch member and defaults to its first.
    const tracks = [aac(128, 'nld'), aac(64, 'eng'), aac(128, 'eng'), aac(64, 'fra'), text('fra'), text('nld')];
    const groups = mediaGroups(tracks);
    expect(groups.map((g) => [g.id, g.members, g.defaultMember])).toEqual([
      ['audio-aacl-128', [0, 2], 0],
      ['audio-aacl-64', [1, 3], 1],
      ['textstream', [4, 5], 4],
    ]);
    const english = [aac(64, 'eng'), aac(128, 'nld'), aac(128, 'eng')];
    expect(mediaGroups(english).map((g) => g.defaultMember)).toEqual([0, 2]);
  });
});

describe('variants', () => {
  test('3 audio groups × 5 videos: i-th with i-th ascending, then the highest audio group with every remaining video', () => {
    // Videos given out of order; ascending they are 400, 600, 900, 1600, 2500.
    // Audio groups ascending: 64, 128 (eng+nld), 384 (AC-3).
    const tracks = [avc(1600), avc(400), aac(128), avc(900), aac(64), avc(2500), ac3(384), avc(600), aac(128, 'nld')];
    const plan = planVariants(tracks, ALL);
    expect(readable(tracks, plan)).toEqual([
      'v400 audio-aacl-64 -',
      'v600 audio-aacl-128 -',
      'v900 audio-ac-3-384 -',
      'v1600 audio-ac-3-384 -',
      'v2500 audio-ac-3-384 -',
      // Audio-only variants, one per group, ascending.
      '- audio-aacl-64 -',
      '- audio-aacl-128 -',
      '- audio-ac-3-384 -',
    ]);
  });

  test('more audio groups than videos: the highest video goes with every remaining group', () => {
    const tracks = [aac(32), aac(64), aac(96), aac(128), avc(800), avc(300)];
    expect(readable(tracks, planVariants(tracks, { audioOnly: false }))).toEqual([
      'v300 audio-aacl-32 -',
      'v800 audio-aacl-64 -',
      'v800 audio-aacl-96 -',
      'v800 audio-aacl-128 -',
    ]);
  });

  test('the text group is added to every variant, audio-only ones included', () => {
    const tracks = [text('eng'), avc(500), aac(64), avc(900), text('nld')];
    expect(readable(tracks, planVariants(tracks, ALL))).toEqual([
      'v500 audio-aacl-64 textstream',
      'v900 audio-aacl-64 textstream',
      '- audio-aacl-64 textstream',
    ]);
  });

  test('audio only: one variant per group, and hls_no_audio_only cannot remove them', () => {
    const tracks = [aac(128, 'eng'), aac(64), aac(128, 'nld'), text('eng')];
    const expected = ['- audio-aacl-64 textstream', '- audio-aacl-128 textstream'];
    expect(readable(tracks, planVariants(tracks, ALL))).toEqual(expected);
    expect(readable(tracks, planVariants(tracks, { audioOnly: false }))).toEqual(expected);
  });

  test('video only: one variant per video, ascending, no audio-only variants', () => {
    const tracks = [avc(900), avc(300), text('eng')];
    expect(readable(tracks, planVariants(tracks, ALL))).toEqual(['v300 - textstream', 'v900 - textstream']);
  });

  test('text only: no variant (the writer refuses: nothing to play)', () => {
    expect(planVariants([text('eng'), text('nld')], ALL).variants).toEqual([]);
    expect(planVariants([], ALL).variants).toEqual([]);
  });

  test('hls_no_audio_only: no audio-only variant when there is video', () => {
    const tracks = [avc(500), aac(64), aac(128)];
    expect(readable(tracks, planVariants(tracks, { audioOnly: false }))).toEqual([
      'v500 audio-aacl-64 -',
      'v500 audio-aacl-128 -',
    ]);
  });

  test('data tracks take no part', () => {
    const tracks: VariantTrack[] = [
      { type: 'data', fourcc: 'meta', codecs: '', bitrate: 1000, language: 'und' },
      avc(500),
      aac(64),
    ];
    expect(readable(tracks, planVariants(tracks, { audioOnly: false }))).toEqual(['v500 audio-aacl-64 -']);
  });

  test('pair(): lengths 0, equal, and unequal both ways', () => {
    expect(pair([], [])).toEqual([]);
    expect(pair([1], [])).toEqual([[1, undefined]]);
    expect(pair([], [7, 8])).toEqual([
      [undefined, 7],
      [undefined, 8],
    ]);
    expect(pair([1, 2], [7, 8])).toEqual([
      [1, 7],
      [2, 8],
    ]);
    expect(pair([1, 2, 3], [7])).toEqual([
      [1, 7],
      [2, 7],
      [3, 7],
    ]);
  });
});

describe('variant sets', () => {
  // 0: v400, 1: v1000, 2: v2000, 3: aac 64, 4: aac 128 eng, 5: aac 128 nld, 6: text eng
  const tracks = [avc(400), avc(1000), avc(2000), aac(64), aac(128), aac(128, 'nld'), text('eng')];

  test("the reference's recipe: two exhaustive sets, the first with one track or group per type, lists that variant first", () => {
    const plan = planVariants(tracks, {
      audioOnly: true,
      sets: [
        [1, 4, 6],
        [0, 2, 3, 4, 5, 6],
      ],
    });
    expect(readable(tracks, plan)).toEqual([
      'v1000 audio-aacl-128 textstream',
      'v400 audio-aacl-64 textstream',
      'v2000 audio-aacl-128 textstream',
      '- audio-aacl-64 textstream',
      '- audio-aacl-128 textstream',
    ]);
  });

  test('a track of a group brings its whole group: selecting the Dutch 128k brings the English one too', () => {
    const plan = planVariants(tracks, { audioOnly: false, sets: [[0, 5]] });
    expect(readable(tracks, plan)).toEqual(['v400 audio-aacl-128 -']);
    expect(plan.groups[plan.variants[0]!.audio!]!.members).toEqual([4, 5]);
  });

  test('sets keep their order; a variant a later set repeats is listed once, where it first appears', () => {
    const plan = planVariants(tracks, {
      audioOnly: false,
      sets: [
        [2, 3],
        [0, 1, 2, 3],
      ],
    });
    // Set 1: v2000 + 64. Set 2: v400+64, v1000+64, v2000+64 (the repeat).
    expect(readable(tracks, plan)).toEqual(['v2000 audio-aacl-64 -', 'v400 audio-aacl-64 -', 'v1000 audio-aacl-64 -']);
  });

  test('tracks outside every set are in no variant, and their groups not in any audio-only variant', () => {
    const plan = planVariants(tracks, { audioOnly: true, sets: [[0, 3]] });
    expect(readable(tracks, plan)).toEqual(['v400 audio-aacl-64 -', '- audio-aacl-64 -']);
  });

  test('a set of audio only makes audio-only variants where it stands; hls_no_audio_only removes them too', () => {
    expect(readable(tracks, planVariants(tracks, { audioOnly: true, sets: [[3], [0, 4]] }))).toEqual([
      '- audio-aacl-64 -',
      'v400 audio-aacl-128 -',
      '- audio-aacl-128 -',
    ]);
    expect(readable(tracks, planVariants(tracks, { audioOnly: false, sets: [[3], [0, 4]] }))).toEqual([
      'v400 audio-aacl-128 -',
    ]);
  });
});

describe('start_index', () => {
  const tracks = [avc(400), avc(1000), avc(2000), aac(64), aac(128)];
  const order = [
    'v400 audio-aacl-64 -',
    'v1000 audio-aacl-128 -',
    'v2000 audio-aacl-128 -',
    '- audio-aacl-64 -',
    '- audio-aacl-128 -',
  ];

  test('moves that variant to the top, the others keep their order; audio-only variants count', () => {
    expect(readable(tracks, planVariants(tracks, { audioOnly: true, startIndex: 0 }))).toEqual(order);
    expect(readable(tracks, planVariants(tracks, { audioOnly: true, startIndex: 2 }))).toEqual([
      order[2],
      order[0],
      order[1],
      order[3],
      order[4],
    ]);
    expect(readable(tracks, planVariants(tracks, { audioOnly: true, startIndex: 4 }))).toEqual([
      order[4],
      ...order.slice(0, 4),
    ]);
  });

  test('counts the variants left after hls_no_audio_only and variant sets', () => {
    expect(readable(tracks, planVariants(tracks, { audioOnly: false, startIndex: 2 }))).toEqual([
      order[2],
      order[0],
      order[1],
    ]);
    const e = thrown(() => planVariants(tracks, { audioOnly: false, startIndex: 3 }));
    expect(e).toBeInstanceOf(OriginError);
  });

  test('past the last variant: a 400 naming start_index and the count', () => {
    for (const startIndex of [5, 6, 9999]) {
      const e = thrown(() => planVariants(tracks, { audioOnly: true, startIndex })) as OriginError;
      expect(e).toBeInstanceOf(OriginError);
      expect([e.kind, e.subject, e.code]).toEqual(['bad-request', 'start_index', 'bad-option']);
      expect(e.message).toBe(
        `start_index: ${startIndex} is past the last variant: this master playlist has 5 (start_index 0 to 4)`,
      );
    }
  });
});

describe('invariants on random track lists', () => {
  const track = fc.oneof(
    fc.record({ type: fc.constant('video' as const), kbps: fc.integer({ min: 100, max: 9000 }) }),
    fc.record({
      type: fc.constant('audio' as const),
      kbps: fc.constantFrom(32, 64, 96, 128, 192, 384),
      language: fc.constantFrom('eng', 'nld', 'fra'),
    }),
    fc.record({ type: fc.constant('textstream' as const), language: fc.constantFrom('eng', 'nld') }),
  );

  test('every video and every audio group is in a variant; A/V variants number max(videos, groups); pairs ascend together', () => {
    fc.assert(
      fc.property(fc.array(track, { maxLength: 14 }), fc.boolean(), (list, audioOnly) => {
        const tracks = list.map((t) =>
          t.type === 'video' ? avc(t.kbps) : t.type === 'audio' ? aac(t.kbps, t.language) : text(t.language),
        );
        const plan = planVariants(tracks, { audioOnly });
        const videos = tracks.flatMap((t, i) => (t.type === 'video' ? [i] : []));
        const audioGroups = plan.groups.flatMap((g, i) => (g.type === 'AUDIO' ? [i] : []));
        const textGroup = plan.groups.findIndex((g) => g.type === 'SUBTITLES');
        const av = plan.variants.filter((v) => v.video !== undefined);
        const audioOnlyVariants = plan.variants.filter((v) => v.video === undefined);
        if (videos.length === 0 && audioGroups.length === 0) return plan.variants.length === 0;
        const paired = videos.length > 0 ? av : audioOnlyVariants;
        expect(paired.length).toBe(Math.max(videos.length, audioGroups.length));
        expect(new Set(av.map((v) => v.video)).size).toBe(videos.length);
        if (videos.length > 0)
          expect(new Set(av.flatMap((v) => (v.audio === undefined ? [] : [v.audio]))).size).toBe(audioGroups.length);
        // Ascending together: neither the video bitrate nor the audio kbps ever goes down.
        for (let i = 1; i < av.length; i++) {
          expect(tracks[av[i]!.video!]!.bitrate).toBeGreaterThanOrEqual(tracks[av[i - 1]!.video!]!.bitrate);
          if (av[i]!.audio !== undefined)
            expect(plan.groups[av[i]!.audio!]!.kbps).toBeGreaterThanOrEqual(plan.groups[av[i - 1]!.audio!]!.kbps);
        }
        expect(audioOnlyVariants.length).toBe(videos.length === 0 || audioOnly ? audioGroups.length : 0);
        expect(plan.variants.every((v) => v.text === (textGroup < 0 ? undefined : textGroup))).toBe(true);
        return true;
      }),
      { numRuns: 500 },
    );
  });
});
