#!/bin/sh
# Writes the .npy fixtures byte by byte from the format's specification
# (numpy's NEP 1 / numpy.lib.format), with no numpy and none of our code:
# magic \x93NUMPY, version bytes, little-endian header length, the header
# dict padded with spaces and ended by \n so the data starts at a multiple
# of 64, then the data.
set -eu
cd "$(dirname "$0")"

# header MAJOR DICT: the preamble and padded header.
header() {
	major=$1 dict=$2
	if [ "$major" = 1 ]; then pre=10; else pre=12; fi
	len=$(( ${#dict} + 1 ))
	pad=$(( (64 - (pre + len) % 64) % 64 ))
	total=$(( len + pad ))
	printf '\223NUMPY'
	printf "\\$(printf %03o "$major")\\000"
	printf "\\$(printf %03o $(( total % 256 )))\\$(printf %03o $(( total / 256 )))"
	if [ "$major" != 1 ]; then printf '\000\000'; fi
	printf '%s' "$dict"
	printf "%${pad}s" ''
	printf '\n'
}

# simple_input0.npy: version 1.0, <i4, shape (3, 16): the values 0..47,
# three samples of the simple model's INPUT0 stacked along axis 0.
{
	header 1 "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 16), }"
	i=0
	while [ $i -lt 48 ]; do
		printf "\\$(printf %03o $i)\\000\\000\\000"
		i=$((i + 1))
	done
} > simple_input0.npy

# be_f8_v2.npy: version 2.0, big-endian >f8, shape (2,): 1.5 and -2.25
# (0x3FF8000000000000 and 0xC002000000000000).
{
	header 2 "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }"
	printf '\077\370\000\000\000\000\000\000'
	printf '\300\002\000\000\000\000\000\000'
} > be_f8_v2.npy
