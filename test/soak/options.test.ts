import { parseSoakOptions, SOAK_USAGE, SoakUsageError } from '../../scripts/soak/options';

/*
 * `npm run soak -- ...`: the defaults, --smoke's shorter run, --help, and a command line it
 * cannot run said in one line that names the option and where the options are listed.
 */

describe('soak options', () => {
  it('defaults to a minute on two instances, and --smoke to the short run', () => {
    expect(parseSoakOptions([])).toEqual({
      duration: 60,
      instances: 2,
      concurrency: 12,
      outage: 3,
      cluster: false,
      smoke: false,
    });
    expect(parseSoakOptions(['--smoke'])).toEqual({
      duration: 8,
      instances: 2,
      concurrency: 6,
      outage: 1.5,
      cluster: false,
      smoke: true,
    });
    expect(parseSoakOptions(['--duration', '120', '--instances=3', '--cluster'])).toMatchObject({
      duration: 120,
      instances: 3,
      cluster: true,
    });
  });

  it('answers help for --help and -h, with a usage naming every option', () => {
    expect(parseSoakOptions(['--help'])).toBe('help');
    expect(parseSoakOptions(['-h'])).toBe('help');
    const listed = [...SOAK_USAGE.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]);
    expect(listed).toEqual([
      '--duration',
      '--instances',
      '--concurrency',
      '--outage',
      '--cluster',
      '--smoke',
      '--help',
    ]);
  });

  it.each([
    [['--nope'], "Unknown option '--nope'; npm run soak -- --help lists the options"],
    [['--duration'], "Option '--duration <value>' argument missing; npm run soak -- --help lists the options"],
    [
      ['--duration', '2'],
      '--duration 2: a whole number of seconds from 5 to 3600; npm run soak -- --help lists the options',
    ],
    [['--instances', 'x'], '--instances x: a whole number from 2 to 8; npm run soak -- --help lists the options'],
    [['--outage', '0.1'], '--outage 0.1: seconds from 0.5 to 60; npm run soak -- --help lists the options'],
  ])('refuses %j in one line', (argv, message) => {
    expect(() => parseSoakOptions(argv)).toThrow(SoakUsageError);
    expect(() => parseSoakOptions(argv)).toThrow(message);
  });
});
