// The browser side of `/play`: plain ES2017, one constant string (its hash goes into the CSP of
// origin/player/player-page.ts). It reads the config block, installs window.__test (read by
// test/helpers/browser.ts), starts the chosen player, turns every error the player or the
// <video> element reports into one readable line, and keeps the view up to date: the quality,
// audio and subtitle selectors (through each player's own API, as a viewer's menu would), the
// live figures and the manifest text. With Basic-auth credentials (`auth=user:password`, the
// demo's /secure/ location) every request to the page's own origin carries them.

export const PLAY_SCRIPT = String.raw`
(function () {
  'use strict';
  var cfg = JSON.parse(document.getElementById('config').textContent);
  var video = document.getElementById('video');
  var t = window.__test = { errors: [], errorTimes: [], events: [], player: cfg.player };
  function at() { return '@' + video.currentTime.toFixed(2); }
  // errorTimes[i]: video.currentTime when errors[i] was reported (the tests judge some player
  // notices by when they happen, e.g. right after the test switched tracks).
  function error(msg) { t.errors.push(msg); t.errorTimes.push(video.currentTime); }
  function event(msg) { t.events.push(msg + ' ' + at()); }
  function str(x) {
    var s;
    try { s = typeof x === 'string' ? x : JSON.stringify(x); } catch (e) { s = String(x); }
    s = s === undefined ? String(x) : s;
    return s.length > 300 ? s.slice(0, 300) + '...' : s;
  }
  function play() {
    var p = video.play();
    if (p) p.catch(function (e) { event('play() rejected: ' + e.name); });
  }
  // The name of a numeric error code in a player's table of constants (for readable errors).
  function nameOf(table, value, suffix) {
    return Object.keys(table || {}).filter(function (k) {
      return table[k] === value && (!suffix || k.slice(-suffix.length) === suffix);
    })[0] || '';
  }
  function b64url(hex) {
    var s = '';
    for (var i = 0; i < hex.length; i += 2) s += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
    return btoa(s).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  }
  function b64urlKeys(keys) {
    var out = {};
    Object.keys(keys).forEach(function (kid) { out[b64url(kid)] = b64url(keys[kid]); });
    return out;
  }
  function need(name, file) {
    if (typeof window[name] === 'undefined') throw new Error(name + ' is not defined (did ' + file + ' load?)');
  }
  // RFC 7617 credentials, sent only to the page's own origin (a license server elsewhere would
  // see them, and a browser preflights any cross-origin Authorization header).
  var authHeader = cfg.auth ? 'Basic ' + btoa(cfg.auth) : '';
  function sameOrigin(url) {
    try { return new URL(url, location.href).origin === location.origin; } catch (e) { return false; }
  }

  ['loadedmetadata', 'canplay', 'playing', 'waiting', 'stalled', 'seeking', 'seeked', 'ended'].forEach(function (n) {
    video.addEventListener(n, function () { event('video:' + n); });
  });
  video.addEventListener('error', function () {
    var e = video.error;
    error('<video> error' + (e ? ' code ' + e.code + (e.message ? ': ' + e.message : '') : ''));
  });

  function hlsjs() {
    need('Hls', '/_players/hls.min.js');
    if (!Hls.isSupported()) throw new Error('hls.js: Media Source Extensions not supported');
    // EME with ClearKey for fMP4 SAMPLE-AES: hls.js takes the KID from the playlist's
    // org.w3.clearkey key line and asks the license server.
    var ck = cfg.clearKey;
    var config = ck && ck.licenseUrl ? { emeEnabled: true, drmSystems: { 'org.w3.clearkey': { licenseUrl: ck.licenseUrl } } } : {};
    // Low-latency live: catch up to the target latency (PART-HOLD-BACK) by playing up to 1.5x.
    // hls.js's default (1: never) keeps whatever latency its start-up left, the time from its
    // first playlist to the first frame; dash.js's low-latency mode catches up by default.
    config.maxLiveSyncPlaybackRate = 1.5;
    // hls.js calls xhrSetup before open(); a header needs the request opened first (its docs).
    if (authHeader) config.xhrSetup = function (xhr, url) {
      if (!sameOrigin(url)) return;
      xhr.open('GET', url, true);
      xhr.setRequestHeader('Authorization', authHeader);
    };
    var hls = new Hls(config);
    window.__player = hls;
    hls.on(Hls.Events.ERROR, function (_, d) {
      var url = d.url || (d.frag && d.frag.url) || (d.context && d.context.url) || '';
      error('hls.js ' + (d.fatal ? 'fatal' : 'non-fatal') + ' ' + d.type + '/' + d.details +
        (d.response && d.response.code !== undefined ? ' HTTP ' + d.response.code : '') +
        (url ? ' ' + url : '') + (d.error && d.error.message ? ': ' + d.error.message : (d.reason ? ': ' + d.reason : '')));
    });
    hls.on(Hls.Events.MANIFEST_PARSED, function (_, d) { event('hls.js:manifestParsed levels=' + d.levels.length); play(); });
    hls.on(Hls.Events.AUDIO_TRACK_SWITCHING, function (_, d) { event('hls.js:audioTrackSwitching ' + d.lang); });
    hls.on(Hls.Events.AUDIO_TRACK_SWITCHED, function (_, d) { event('hls.js:audioTrackSwitched ' + d.id); });
    hls.on(Hls.Events.SUBTITLE_TRACK_SWITCH, function (_, d) { event('hls.js:subtitleTrackSwitch ' + d.id); });
    hls.on(Hls.Events.FRAG_LOADING, function (_, d) { if (d.frag.type === 'subtitle') event('hls.js:fragLoading ' + d.frag.type + ' ' + d.frag.sn); });
    hls.loadSource(cfg.url);
    hls.attachMedia(video);
  }

  function dash(mss) {
    need('dashjs', '/_players/dash.all.min.js');
    if (mss && typeof dashjs.MssHandler !== 'function') throw new Error('dash.js MSS module is not loaded');
    var p = dashjs.MediaPlayer().create();
    window.__player = p;
    function describe(e) {
      if (!e || e.code === undefined) return str(e);
      var name = nameOf(dashjs.MediaPlayer.errors, e.code, '_CODE');
      return 'code ' + e.code + (name ? ' ' + name : '') + (e.message ? ': ' + e.message : '');
    }
    p.on('error', function (e) { error('dash.js error ' + describe(e.error)); });
    p.on('playbackError', function (e) { error('dash.js playbackError ' + describe(e.error)); });
    p.on('streamInitialized', function () { event('dash.js:streamInitialized'); });
    // EME with the W3C ClearKey system: keys given (base64url, as the CDM's messages carry them),
    // or a license server dash.js POSTs the CDM's request to.
    var ck = cfg.clearKey;
    if (ck && ck.keys) p.setProtectionData({ 'org.w3.clearkey': { clearkeys: b64urlKeys(ck.keys) } });
    else if (ck && ck.licenseUrl) p.setProtectionData({ 'org.w3.clearkey': { serverURL: ck.licenseUrl } });
    if (authHeader) p.addRequestInterceptor(function (r) {
      if (sameOrigin(r.url)) { r.headers = r.headers || {}; r.headers.Authorization = authHeader; }
      return Promise.resolve(r);
    });
    // A Smooth manifest has no UTCTiming: for live, dash.js would ask its default public time
    // server; the origin's own clock (/.time, manifests/dash-live.ts) is the one to agree with.
    if (mss) p.updateSettings({ streaming: { utcSynchronization: { defaultTimingSource: {
      scheme: 'urn:mpeg:dash:utc:http-xsdate:2014', value: new URL('/.time', new URL(cfg.url, location.href)).href } } } });
    p.initialize(video, cfg.url, true);
    p.attachTTMLRenderingDiv(document.getElementById('ttml'));
  }

  function shakaError(e) {
    if (!e || e.code === undefined) return str(e && e.message ? e.message : e);
    var E = (shaka.util && shaka.util.Error) || {};
    return 'code ' + e.code + ' ' + nameOf(E.Code, e.code) +
      ' (category ' + (nameOf(E.Category, e.category) || e.category) +
      ', severity ' + (nameOf(E.Severity, e.severity) || e.severity) + ')' +
      (e.data && e.data.length ? ' data ' + str(e.data) : '');
  }
  function shakaStart(file, mimeType) {
    need('shaka', file);
    shaka.polyfill.installAll();
    if (!shaka.Player.isBrowserSupported()) throw new Error('shaka: browser not supported');
    var player = new shaka.Player();
    window.__player = player;
    player.addEventListener('error', function (e) { error('shaka error ' + shakaError(e.detail)); });
    if (authHeader) player.getNetworkingEngine().registerRequestFilter(function (_type, r) {
      if (sameOrigin(r.uris[0])) r.headers.Authorization = authHeader;
    });
    var ck = cfg.clearKey;
    // shaka 5's HLS parser refuses the org.w3.clearkey key format: with the keys given, the
    // manifest's DRM lines are not needed.
    if (ck && ck.keys) player.configure({ drm: { clearKeys: ck.keys }, manifest: { ignoreDrmInfo: /\.m3u8/.test(cfg.url) } });
    else if (ck && ck.licenseUrl) player.configure({ drm: { servers: { 'org.w3.clearkey': ck.licenseUrl } } });
    // shaka 5 times WebVTT in fMP4 HLS by the video appends that follow the text track's
    // selection; a track chosen after the short clip is fully buffered never gets its cues. Asking
    // for the page's language up front streams the matching subtitles with the media.
    if ('preferredText' in player.getConfiguration()) {
      player.configure({ preferredText: [{ language: (navigator.language || 'en').split('-')[0], role: '', format: '', forced: false }] });
    }
    player.attach(video)
      .then(function () { return player.load(cfg.url, null, mimeType); })
      .then(function () { event('shaka:loaded'); play(); })
      .catch(function (e) { error('shaka load() rejected: ' + shakaError(e)); });
  }

  // Test controls (read by test/support/browser.ts; harmless by hand): switch the audio language
  // and show subtitles through each player's own API, the way a viewer's menu would.
  function langMatches(lang, wanted) {
    lang = String(lang || '').toLowerCase();
    return wanted.some(function (w) { return lang === w || lang.split('-')[0] === w; });
  }
  var controls = {
    hlsjs: {
      audio: function () { var p = window.__player, tr = p.audioTracks[p.audioTrack]; return tr ? tr.lang || '' : ''; },
      setAudio: function (wanted) {
        var p = window.__player;
        var i = p.audioTracks.findIndex(function (tr) { return langMatches(tr.lang, wanted); });
        if (i < 0) throw new Error('hls.js has no audio track in ' + wanted + ': ' + str(p.audioTracks.map(function (tr) { return tr.lang; })));
        p.audioTrack = i;
      },
      showText: function () { var p = window.__player; p.subtitleDisplay = true; if (p.subtitleTracks.length > 0) p.subtitleTrack = 0; },
      textReady: function () { return window.__player.subtitleTracks.length > 0; }
    },
    // shaka 5 has getAudioTracks/selectAudioTrack and shows a selected text track; shaka 4 has
    // getAudioLanguages/selectAudioLanguage and a separate visibility switch.
    shaka: {
      audio: function () {
        var p = window.__player;
        var all = p.getAudioTracks ? p.getAudioTracks() : p.getVariantTracks();
        var v = all.filter(function (tr) { return tr.active; })[0];
        return v ? v.language : '';
      },
      setAudio: function (wanted) {
        var p = window.__player;
        if (p.getAudioTracks) {
          var tr = p.getAudioTracks().filter(function (a) { return langMatches(a.language, wanted); })[0];
          if (tr === undefined) throw new Error('shaka has no audio track in ' + wanted + ': ' + str(p.getAudioTracks().map(function (a) { return a.language; })));
          p.selectAudioTrack(tr);
          return;
        }
        var lang = p.getAudioLanguages().filter(function (l) { return langMatches(l, wanted); })[0];
        if (lang === undefined) throw new Error('shaka has no audio language in ' + wanted + ': ' + str(p.getAudioLanguages()));
        p.selectAudioLanguage(lang);
      },
      showText: function () {
        var p = window.__player, tracks = p.getTextTracks();
        if (tracks.length > 0) p.selectTextTrack(tracks[0]);
        if (p.setTextTrackVisibility) p.setTextTrackVisibility(true);
      },
      textReady: function () { var p = window.__player; return !!p && p.getTextTracks().length > 0; }
    },
    native: {
      audio: function () {
        var a = video.audioTracks;
        if (!a) return '';
        for (var i = 0; i < a.length; i++) if (a[i].enabled) return a[i].language;
        return '';
      },
      setAudio: function (wanted) {
        var a = video.audioTracks, found = -1, i;
        if (!a) throw new Error('this browser has no HTMLMediaElement.audioTracks');
        for (i = 0; i < a.length; i++) if (found < 0 && langMatches(a[i].language, wanted)) found = i;
        if (found < 0) throw new Error('no native audio track in ' + wanted);
        for (i = 0; i < a.length; i++) a[i].enabled = i === found;
      },
      showText: function () { for (var i = 0; i < video.textTracks.length; i++) video.textTracks[i].mode = 'showing'; },
      textReady: function () { return video.textTracks.length > 0; }
    }
  };
  function control(name) {
    var c = controls[cfg.player] || (cfg.player === 'shaka4-mss' ? controls.shaka : undefined);
    if (!c || !c[name]) throw new Error(cfg.player + ' has no test control ' + name);
    return c[name];
  }
  t.audioLanguage = function () { try { return control('audio')(); } catch (e) { return 'error: ' + e.message; } };
  t.setAudioLanguage = function (wanted) {
    try { control('setAudio')(wanted); event('test:audio ' + wanted.join('/')); } catch (e) { error('setAudioLanguage: ' + e.message); }
  };
  // Whether the player lists text tracks yet (a viewer can pick subtitles from its menu).
  t.textReady = function () { try { return !!control('textReady')(); } catch (e) { return false; } };
  t.showText = function () {
    try { control('showText')(); event('test:showText'); } catch (e) { error('showText: ' + e.message); }
  };
  // The largest number of cues any text track of the <video> holds (players render into them).
  t.cues = function () {
    var n = 0;
    for (var i = 0; i < video.textTracks.length; i++) {
      var c = video.textTracks[i].cues;
      if (c && c.length > n) n = c.length;
    }
    return n;
  };


  // The view: selectors and figures, read from the player every half second. Each player has
  // quality (video renditions; 'auto' is its adaptation), audio and text lists, and a setter.
  function kbps(bps) { return bps ? Math.round(bps / 1000) + ' kbit/s' : ''; }
  function rendition(height, bps) { return (height ? height + 'p ' : '') + kbps(bps); }
  function shakaVariants(p) {
    var seen = {};
    return p.getVariantTracks().filter(function (v) {
      var k = v.videoId + ' ' + v.height + ' ' + v.videoBandwidth;
      if (seen[k] || v.videoId === null || v.videoId === undefined) return false;
      seen[k] = true;
      return true;
    });
  }
  var views = {
    hlsjs: {
      quality: function (p) { return { list: p.levels.map(function (l, i) { return { id: String(i), label: rendition(l.height, l.bitrate) }; }), active: p.autoLevelEnabled ? 'auto' : String(p.currentLevel) }; },
      setQuality: function (p, id) { p.currentLevel = id === 'auto' ? -1 : Number(id); },
      audio: function (p) { return { list: p.audioTracks.map(function (a, i) { return { id: String(i), label: (a.name || '') + ' (' + (a.lang || '?') + ')' }; }), active: String(p.audioTrack) }; },
      setAudio: function (p, id) { p.audioTrack = Number(id); },
      text: function (p) { return { list: p.subtitleTracks.map(function (s, i) { return { id: String(i), label: (s.name || '') + ' (' + (s.lang || '?') + ')' }; }), active: String(p.subtitleTrack) }; },
      setText: function (p, id) { p.subtitleDisplay = id !== '-1'; p.subtitleTrack = Number(id); },
      bitrate: function (p) { var l = p.levels[p.currentLevel]; return l ? l.bitrate : 0; }
    },
    dashjs: {
      quality: function (p) {
        var cur = p.getCurrentRepresentationForType('video'), list = p.getRepresentationsByType('video');
        var auto = p.getSettings().streaming.abr.autoSwitchBitrate.video;
        var at = cur ? list.map(function (r) { return r.id; }).indexOf(cur.id) : -1;
        return { list: list.map(function (r, i) { return { id: String(i), label: rendition(r.height, r.bandwidth) }; }), active: auto ? 'auto' : String(at) };
      },
      setQuality: function (p, id) {
        p.updateSettings({ streaming: { abr: { autoSwitchBitrate: { video: id === 'auto' } } } });
        if (id !== 'auto') p.setRepresentationForTypeByIndex('video', Number(id), true);
      },
      audio: function (p) {
        var cur = p.getCurrentTrackFor('audio'), list = p.getTracksFor('audio');
        return { list: list.map(function (a, i) { return { id: String(i), label: (a.lang || '?') + ' ' + (a.codec || '') }; }), active: String(list.indexOf(cur)) };
      },
      setAudio: function (p, id) { p.setCurrentTrack(p.getTracksFor('audio')[Number(id)]); },
      text: function (p) {
        var list = p.getTracksFor('text'), cur = p.getCurrentTrackFor('text');
        return { list: list.map(function (s, i) { return { id: String(i), label: s.lang || '?' }; }), active: p.isTextEnabled() && cur ? String(list.indexOf(cur)) : '-1' };
      },
      setText: function (p, id) { p.enableText(id !== '-1'); if (id !== '-1') p.setTextTrack(Number(id)); },
      bitrate: function (p) { var r = p.getCurrentRepresentationForType('video'); return r ? r.bandwidth : 0; }
    },
    shaka: {
      quality: function (p) {
        var list = shakaVariants(p);
        var active = list.filter(function (v) { return v.active; })[0];
        return { list: list.map(function (v) { return { id: String(v.id), label: rendition(v.height, v.videoBandwidth || v.bandwidth) }; }), active: p.getConfiguration().abr.enabled ? 'auto' : active ? String(active.id) : '' };
      },
      setQuality: function (p, id) {
        p.configure({ abr: { enabled: id === 'auto' } });
        var v = p.getVariantTracks().filter(function (x) { return String(x.id) === id; })[0];
        if (v) p.selectVariantTrack(v, true);
      },
      audio: function (p) {
        // shaka 5 lists audio tracks, shaka 4 languages.
        var langs = p.getAudioTracks ? p.getAudioTracks().map(function (a) { return a.language; }) : p.getAudioLanguages();
        langs = langs.filter(function (l, i) { return langs.indexOf(l) === i; });
        var cur = controls.shaka.audio();
        return { list: langs.map(function (l) { return { id: l, label: l }; }), active: cur };
      },
      setAudio: function (p, id) { controls.shaka.setAudio([id]); },
      text: function (p) {
        var list = p.getTextTracks(), on = p.isTextTrackVisible ? p.isTextTrackVisible() : true;
        var active = list.filter(function (s) { return s.active; })[0];
        return { list: list.map(function (s) { return { id: String(s.id), label: s.language || '?' }; }), active: on && active ? String(active.id) : '-1' };
      },
      setText: function (p, id) {
        var s = p.getTextTracks().filter(function (x) { return String(x.id) === id; })[0];
        if (s) p.selectTextTrack(s);
        if (p.setTextTrackVisibility) p.setTextTrackVisibility(id !== '-1');
      },
      bitrate: function (p) { return p.getStats().streamBandwidth || 0; }
    },
    native: {
      quality: function () { return { list: [], active: 'auto' }; },
      setQuality: function () {},
      audio: function () {
        var a = video.audioTracks, list = [], active = '';
        for (var i = 0; a && i < a.length; i++) { list.push({ id: String(i), label: a[i].language || a[i].label || '?' }); if (a[i].enabled) active = String(i); }
        return { list: list, active: active };
      },
      setAudio: function (_p, id) { var a = video.audioTracks; for (var i = 0; a && i < a.length; i++) a[i].enabled = String(i) === id; },
      text: function () {
        var tt = video.textTracks, list = [], active = '-1';
        for (var i = 0; i < tt.length; i++) { list.push({ id: String(i), label: tt[i].language || tt[i].label || '?' }); if (tt[i].mode === 'showing') active = String(i); }
        return { list: list, active: active };
      },
      setText: function (_p, id) { var tt = video.textTracks; for (var i = 0; i < tt.length; i++) tt[i].mode = String(i) === id ? 'showing' : 'disabled'; },
      bitrate: function () { return 0; }
    }
  };
  var view = views[cfg.player] || views[cfg.player.split('-')[0]] || (cfg.player === 'shaka4-mss' ? views.shaka : views.native);
  function fill(id, lists, extra) {
    var select = document.getElementById(id);
    var options = extra.concat(lists.list);
    var key = options.map(function (o) { return o.id + '=' + o.label; }).join('|');
    if (select.dataset.key !== key) {
      select.textContent = '';
      options.forEach(function (o) {
        var opt = document.createElement('option');
        opt.value = o.id;
        opt.textContent = o.label;
        select.appendChild(opt);
      });
      select.dataset.key = key;
    }
    if (document.activeElement !== select) select.value = lists.active;
    select.disabled = lists.list.length === 0;
  }
  function read(name) { try { return view[name](window.__player); } catch (e) { return { list: [], active: '' }; } }
  function refresh() {
    if (!window.__player && cfg.player !== 'native') return;
    fill('quality', read('quality'), [{ id: 'auto', label: 'auto' }]);
    fill('audio', read('audio'), []);
    fill('text', read('text'), [{ id: '-1', label: 'off' }]);
    var f = t.figures();
    document.getElementById('f-bitrate').textContent = f.bitrate ? kbps(f.bitrate) : '-';
    document.getElementById('f-resolution').textContent = f.width ? f.width + 'x' + f.height : '-';
    document.getElementById('f-buffer').textContent = f.buffer.toFixed(1) + ' s';
    document.getElementById('f-dropped').textContent = f.dropped + ' of ' + f.frames;
    document.getElementById('f-errors').textContent = String(t.errors.length);
    var list = document.getElementById('errors');
    while (list.children.length < t.errors.length) {
      var li = document.createElement('li');
      li.textContent = t.errors[list.children.length];
      list.appendChild(li);
    }
  }
  ['quality', 'audio', 'text'].forEach(function (name) {
    var setter = 'set' + name[0].toUpperCase() + name.slice(1);
    document.getElementById(name).addEventListener('change', function (e) {
      try { view[setter](window.__player, e.target.value); event('view:' + name + ' ' + e.target.value); } catch (x) { error(setter + ': ' + x.message); }
    });
  });
  // The figures a viewer (and the tests) read: bits per second of the current video rendition
  // as the player reports it, the picture size, seconds buffered ahead, dropped and total frames.
  t.figures = function () {
    var q = video.getVideoPlaybackQuality ? video.getVideoPlaybackQuality() : { droppedVideoFrames: 0, totalVideoFrames: 0 };
    var ahead = 0, b = video.buffered;
    for (var i = 0; i < b.length; i++) if (b.start(i) <= video.currentTime + 0.1 && b.end(i) > video.currentTime) ahead = b.end(i) - video.currentTime;
    var bitrate = 0;
    try { bitrate = view.bitrate(window.__player) || 0; } catch (e) { bitrate = 0; }
    return { bitrate: bitrate, width: video.videoWidth, height: video.videoHeight, buffer: ahead, dropped: q.droppedVideoFrames, frames: q.totalVideoFrames };
  };
  // What the selectors offer, as labels (the tests compare them with the filter's selection).
  t.selectors = function () {
    var out = {};
    ['quality', 'audio', 'text'].forEach(function (id) {
      out[id] = [].map.call(document.getElementById(id).options, function (o) { return o.textContent; });
    });
    return out;
  };
  setInterval(refresh, 500);

  // The manifest next to the video, as the player fetched it (same credentials), XML indented.
  function indentXml(text) {
    var doc = new DOMParser().parseFromString(text, 'application/xml');
    if (doc.getElementsByTagName('parsererror').length > 0) return text;
    var out = [];
    function attrs(el) { return [].map.call(el.attributes, function (a) { return ' ' + a.name + '="' + a.value + '"'; }).join(''); }
    function walk(el, depth) {
      var pad = new Array(depth + 1).join('  ');
      var kids = [].filter.call(el.childNodes, function (n) { return n.nodeType === 1 || (n.nodeType === 3 && n.textContent.trim() !== ''); });
      if (kids.length === 0) { out.push(pad + '<' + el.tagName + attrs(el) + '/>'); return; }
      if (kids.length === 1 && kids[0].nodeType === 3) { out.push(pad + '<' + el.tagName + attrs(el) + '>' + kids[0].textContent.trim() + '</' + el.tagName + '>'); return; }
      out.push(pad + '<' + el.tagName + attrs(el) + '>');
      kids.forEach(function (k) { if (k.nodeType === 1) walk(k, depth + 1); else out.push(pad + '  ' + k.textContent.trim()); });
      out.push(pad + '</' + el.tagName + '>');
    }
    walk(doc.documentElement, 0);
    return out.join('\n');
  }
  var pre = document.getElementById('manifest');
  fetch(cfg.url, { headers: authHeader && sameOrigin(cfg.url) ? { Authorization: authHeader } : {} })
    .then(function (r) { return r.text().then(function (body) { return { status: r.status, body: body }; }); })
    .then(function (r) {
      var text = r.body.length > 200000 ? r.body.slice(0, 200000) + '\n...' : r.body;
      pre.textContent = (r.status !== 200 ? 'HTTP ' + r.status + '\n' : '') + (/^\s*</.test(text) ? indentXml(text) : text);
    })
    .catch(function (e) { pre.textContent = 'cannot fetch the manifest: ' + e.message; });

  var start = {
    hlsjs: hlsjs,
    dashjs: function () { dash(false); },
    'dashjs-mss': function () { dash(true); },
    shaka: function () { shakaStart('/_players/shaka-player.compiled.js', undefined); },
    // A Smooth URL (".../Manifest") has no extension shaka knows: name the MIME type (MS-SSTR).
    'shaka4-mss': function () {
      need('ISOBoxer', '/_players/codem-isoboxer.min.js');
      shakaStart('/_players/shaka4/shaka-player.compiled.js', 'application/vnd.ms-sstr+xml');
    },
    native: function () { video.src = cfg.url; play(); }
  };
  try {
    if (!Object.prototype.hasOwnProperty.call(start, cfg.player)) throw new Error('unknown player ' + cfg.player);
    start[cfg.player]();
  } catch (e) {
    error('start failed: ' + (e && e.message ? e.message : str(e)));
  }
})();
`;
