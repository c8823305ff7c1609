// The track properties a filter expression can name, in their canonical order and spelling.
//
// The index of a name in VARIABLE_NAMES is its variable index: the host sets track values by
// index (setString / setNumber / setRational) and reads this table once through the exported
// variableNames(). Adding a variable means appending it here (never reordering: indices are
// part of the boundary API). Names match case-insensitively (ASCII); aliases map to an index.

export const TYPE_CONDITION: i32 = 0; // true/false, comparisons, &&, ||, !
export const TYPE_NUMBER: i32 = 1; // integers and exact rationals
export const TYPE_STRING: i32 = 2;

export const VARIABLE_NAMES: StaticArray<string> = [
  'type',
  'FourCC',
  'trackID',
  'trackName',
  'AudioTag',
  'Channels',
  'SamplingRate',
  'BitsPerSample',
  'MaxWidth',
  'MaxHeight',
  'DisplayWidth',
  'DisplayHeight',
  'TimeScale',
  'avc_level',
  'avc_profile',
  'systemBitrate',
  'systemLanguage',
  'FrameRate',
  'ScanType',
  'Roles',
];

export const VARIABLE_TYPES: StaticArray<i32> = [
  TYPE_STRING,
  TYPE_STRING,
  TYPE_NUMBER,
  TYPE_STRING,
  TYPE_NUMBER,
  TYPE_NUMBER,
  TYPE_NUMBER,
  TYPE_NUMBER,
  TYPE_NUMBER,
  TYPE_NUMBER,
  TYPE_NUMBER,
  TYPE_NUMBER,
  TYPE_NUMBER,
  TYPE_NUMBER,
  TYPE_NUMBER,
  TYPE_NUMBER,
  TYPE_STRING,
  TYPE_NUMBER,
  TYPE_STRING,
  TYPE_STRING,
];

export const VARIABLE_COUNT: i32 = 20;

// Other spellings accepted on input; canonical() prints the target's canonical name.
const ALIAS_NAMES: StaticArray<string> = ['SampleRate'];
const ALIAS_TARGETS: StaticArray<i32> = [6];

// Named numeric constants (H.264 Annex A profile_idc values).
export const CONSTANT_NAMES: StaticArray<string> = ['AVC_PROFILE_BASELINE', 'AVC_PROFILE_MAIN', 'AVC_PROFILE_HIGH'];
export const CONSTANT_VALUES: StaticArray<i64> = [66, 77, 100];

// Reserved words of the grammar (matched case-insensitively like every name).
export const KEYWORDS: StaticArray<string> = ['true', 'false', 'count'];

/** ASCII-only case-insensitive equality: identifiers are ASCII by the lexer's rule. */
export function sameName(a: string, b: string): bool {
  if (a.length != b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (lowerAscii(a.charCodeAt(i)) != lowerAscii(b.charCodeAt(i))) return false;
  }
  return true;
}

export function lowerAscii(c: i32): i32 {
  return c >= 65 && c <= 90 ? c + 32 : c;
}

/** Variable index of a name or alias, or -1. */
export function variableIndex(name: string): i32 {
  for (let i = 0; i < VARIABLE_COUNT; i++) {
    if (sameName(name, VARIABLE_NAMES[i])) return i;
  }
  for (let i = 0; i < ALIAS_NAMES.length; i++) {
    if (sameName(name, ALIAS_NAMES[i])) return ALIAS_TARGETS[i];
  }
  return -1;
}

/** Constant index of a name, or -1. */
export function constantIndex(name: string): i32 {
  for (let i = 0; i < CONSTANT_NAMES.length; i++) {
    if (sameName(name, CONSTANT_NAMES[i])) return i;
  }
  return -1;
}

/** The known name closest to `name` (edit distance, case-insensitive), for "did you mean". */
export function closestName(name: string): string {
  // A name that contains what was typed ("bitrate" -> "systemBitrate") beats edit distance.
  const lowered = lowerAsciiString(name);
  for (let i = 0; i < VARIABLE_COUNT; i++) {
    if (name.length >= 3 && lowerAsciiString(VARIABLE_NAMES[i]).indexOf(lowered) >= 0) return VARIABLE_NAMES[i];
  }
  let best = VARIABLE_NAMES[0];
  let bestDistance = i32.MAX_VALUE;
  for (let group = 0; group < 4; group++) {
    const names = group == 0 ? VARIABLE_NAMES : group == 1 ? ALIAS_NAMES : group == 2 ? CONSTANT_NAMES : KEYWORDS;
    for (let i = 0; i < names.length; i++) {
      const d = editDistance(name, names[i]);
      if (d < bestDistance) {
        bestDistance = d;
        best = group == 1 ? VARIABLE_NAMES[ALIAS_TARGETS[i]] : names[i];
      }
    }
  }
  return best;
}

// Levenshtein distance over ASCII-lowered code units, one row; the lexer caps identifiers at the
// 4 KiB text limit, so the row stays small.
function editDistance(a: string, b: string): i32 {
  const n = b.length;
  const row = new StaticArray<i32>(n + 1);
  for (let j = 0; j <= n; j++) row[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    const ca = lowerAscii(a.charCodeAt(i - 1));
    for (let j = 1; j <= n; j++) {
      const above = row[j];
      const cost = ca == lowerAscii(b.charCodeAt(j - 1)) ? 0 : 1;
      let best = diagonal + cost;
      if (above + 1 < best) best = above + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diagonal = above;
    }
  }
  return row[n];
}

function lowerAsciiString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += String.fromCharCode(lowerAscii(s.charCodeAt(i)));
  return out;
}
