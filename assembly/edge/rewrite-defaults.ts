// The default rule set ("rules": "default"): the reference's rewrite-map aliasing recipe
// (service description, "URL aliases with rewrite maps"), written in the same JSON a location
// may give itself, and compiled by the same code. docs/reference/edge-config.md#rewrite shows this text; a test
// keeps the two equal.
//
// Order matters (first match wins), and the classes keep the shapes apart: `name` parts hold no
// "-", "@" or "/", so a media playlist `<prefix>-<rest>.m3u8` is never taken for a master
// `<bundle>.m3u8`. `alter[format]` is a strict lookup: a directory that is not a key of the alter
// map is no alias format, so the origin's own `keyframes/`, `hls/` and virtual paths pass
// untouched. `filter[bundle]?` and `timeline[prefix]?` are optional: an unknown key adds nothing,
// as an Apache RewriteMap lookup gives "" (the default-name sibling, whose prefix is the
// presentation's basename, plays the whole timeline). Segments append the request's query
// (`$query`, Apache's [QSA]): this origin keeps `t`/`vbegin` on segment URLs under
// suppress_query_parameters, because they decide which media a segment number names. Smooth
// takes the operator's filter first (the origin reads the first `filter`); the Smooth manifest
// also suppresses the query in its fragment template, so fragment URLs stay query-free and the
// fragment rule adds the filter once.

export const DEFAULT_RULES_JSON: string = `[
  {"match": "<ism>/<format:name>/<prefix:name>-<rest>.m3u8", "to": "<ism>/<rest>.m3u8",
   "query": ["alter[format]", "timeline[prefix]?", "suppress_query_parameters"]},
  {"match": "<ism>/<format:name>/<bundle:name>@<timeline:name>.m3u8", "to": "<ism>/.m3u8",
   "query": ["alter[format]", "filter[bundle]?", "presentation_name=<timeline>", "suppress_query_parameters"]},
  {"match": "<ism>/<format:name>/<bundle:name>.m3u8", "to": "<ism>/.m3u8",
   "query": ["alter[format]", "filter[bundle]?", "suppress_query_parameters"]},
  {"match": "<ism>/<format:name>/keyframes/<prefix:name>-<rest>.m3u8", "to": "<ism>/keyframes/<rest>.m3u8",
   "query": ["alter[format]", "timeline[prefix]?", "suppress_query_parameters"]},
  {"match": "<ism>/<format:name>/keyframes/<file>.<ext:ts|m4s>", "to": "<ism>/keyframes/<file>.<ext>",
   "query": ["alter[format]", "$query"]},
  {"match": "<ism>/<format:name>/hls/<file>.m4s", "to": "<ism>/hls/<file>.m4s",
   "query": ["alter[format]", "$query"]},
  {"match": "<ism>/<format:name>/<file>.<ext:ts|aac|ac3|ec3|webvtt>", "to": "<ism>/<file>.<ext>",
   "query": ["alter[format]", "$query"]},
  {"match": "<ism>/<dir:name>/QualityLevels(<bitrate>)/Fragments(<fragment>)", "to": "<ism>/QualityLevels(<bitrate>)/Fragments(<fragment>)",
   "query": ["filter[dir]", "$query"]},
  {"match": "<ism>/<dir:name>/<manifest:Manifest|manifest>", "to": "<ism>/<manifest>",
   "query": ["filter[dir]", "$query", "suppress_query_parameters"]}
]`;
