// The option parsing the subcommands share (origin/cli/args.ts): -h/-q where a command takes them,
// ports checked the same way everywhere, and a -q refused where a command has no quiet.

import { eachOption, portArg, UsageError } from '../../../origin/cli/args';
import { parseDemoArgs } from '../../../origin/cli/demo-command';
import { parseEdgeArgs } from '../../../origin/cli/edge-command';
import { parseEdgeConfigArgs } from '../../../origin/cli/edge-config-command';
import { parseServeArgs } from '../../../origin/cli/serve-command';
import { parseSignUrlArgs } from '../../../origin/cli/sign-url-command';

describe('eachOption', () => {
  it('sets help and quiet and passes the rest on in order', () => {
    const a = { help: false, quiet: false };
    const seen: string[] = [];
    eachOption(['--port', '-h', 'x', '--quiet', '--root=r'], a, ({ flag }) => seen.push(flag));
    expect(a).toEqual({ help: true, quiet: true });
    expect(seen).toEqual(['--port', 'x', '--root']);
  });

  it('leaves -q to the command when it has no quiet', () => {
    const a = { help: false };
    const seen: string[] = [];
    eachOption(['-q', '--help'], a, ({ flag }) => seen.push(flag));
    expect(a).toEqual({ help: true });
    expect(seen).toEqual(['-q']);
  });
});

describe('the subcommands on -h, -q and ports', () => {
  it('serve and edge take -q and -h', () => {
    expect(parseServeArgs(['-q', '-h'])).toMatchObject({ quiet: true, help: true });
    expect(parseServeArgs(['--root', 'r'])).toMatchObject({ quiet: false, help: false });
    expect(parseEdgeArgs(['--quiet', '--help', '-c', 'e.yaml'])).toMatchObject({ quiet: true, help: true });
    expect(parseEdgeArgs(['-c', 'e.yaml'])).toMatchObject({ quiet: false, help: false });
  });

  it('sign-url and edge-config refuse -q', () => {
    expect(parseSignUrlArgs(['--help'])).toMatchObject({ help: true });
    expect(() => parseSignUrlArgs(['-q'])).toThrow(new UsageError('unknown option -q'));
    expect(parseEdgeConfigArgs(['-h'])).toMatchObject({ help: true });
    expect(() => parseEdgeConfigArgs(['-q', 'd.yaml'])).toThrow(/unknown option "-q"/);
  });

  it('checks ports alike in serve, edge and demo', () => {
    expect(parseServeArgs(['--root', 'r', '--port', '0']).port).toBe(0);
    expect(parseServeArgs(['--root', 'r', '--port=65535']).port).toBe(65535);
    expect(() => parseServeArgs(['--root', 'r', '--port', '65536'])).toThrow(
      new UsageError('--port must be 0..65535, not "65536"'),
    );
    expect(parseEdgeArgs(['-c', 'e.yaml', '--admin-port', '9901']).adminPort).toBe(9901);
    expect(() => parseEdgeArgs(['-c', 'e.yaml', '--admin-port=x'])).toThrow(
      new UsageError('--admin-port must be 0..65535, not "x"'),
    );
    expect(parseDemoArgs(['--edge-port', '8090']).edgePort).toBe(8090);
    expect(() => parseDemoArgs(['--clearkey-port', '123456'])).toThrow(
      new UsageError('--clearkey-port must be 0..65535, not "123456"'),
    );
    expect(() => portArg('--p', '-1')).toThrow(new UsageError('--p must be 0..65535, not "-1"'));
  });
});
