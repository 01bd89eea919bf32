#!/bin/sh
# paired.sh runs two sub-benchmarks back to back N times (0.3 s each) and
# prints the median of the second's time over the first's, with the
# range and the pair that gave the median. On a shared machine whose speed
# changes from minute to minute, a ratio of two runs taken seconds apart
# is steadier than either time. BenchmarkKeys100kPaired, whose rounds are
# taken in turns within one process, is steadier still for acctapi
# against sethvargo on 100,000 keys.
#
#   go test -c -o /tmp/bench.test . &&
#   ./paired.sh /tmp/bench.test 'Keys100kParallel/(acctapi|sethvargo)' 20
set -eu
bin=$1 re=$2 n=${3:-20}
for _ in $(seq 1 "$n"); do
	"$bin" -test.run x -test.bench "$re" -test.benchtime 0.3s | grep '^Benchmark' | awk '{printf "%s ", $3}'
	echo
done | awk 'NF == 2 {printf "%s %s %.3f\n", $1, $2, $2/$1}' | sort -k3n | awk '
	{r[NR] = $3; a[NR] = $1; b[NR] = $2}
	END {
		if (NR == 0) { print "no pairs: does the pattern match two sub-benchmarks?"; exit 1 }
		m = int((NR + 1) / 2)
		printf "%d pairs: median ratio %.2f (%.2f to %.2f); the median pair %s and %s ns/op\n", NR, r[m], r[1], r[NR], a[m], b[m]
	}'
