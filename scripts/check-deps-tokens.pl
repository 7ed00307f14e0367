#!/usr/bin/perl
# check-deps' tokenizer (scripts/check-deps.sh runs it): a heuristic
# reader of shell, make recipes and C that prints one line per command,
# library or header a file uses:
#   KIND <tab> NAME <tab> FILE:LINE[, FILE:LINE...] [<tab> c|c++]
# (the first use in each file).  Arguments: sh:FILE, mk:FILE or c:FILE.
# The environment gives the shell's builtins and keywords (CD_BUILTINS,
# CD_KEYWORDS: compgen -b, compgen -k), which are not commands.
# Tested by tests/check-deps (fixtures and the lines they must give).
use strict;
use warnings;

my %builtin = map { $_ => 1 } split ' ', $ENV{CD_BUILTINS};
my %keyword = map { $_ => 1 } split ' ', $ENV{CD_KEYWORDS};
my (%func, %wrapper, %fshift, @fstack);	# shell functions, those that run "$@"
my (%uses, %hlang);
my $pass;

# Commands that run the command given in their arguments: options taking a
# separate value, positional words before the command, VAR=value words.
my %prefix = (
	env => { arg => [qw(-u --unset -C --chdir -S --split-string)], assign => 1 },
	timeout => { arg => [qw(-k --kill-after -s --signal)], pos => 1 },
	xargs => { arg => [qw(-a -d -E -I -L -n -P -s --arg-file --delimiter --max-args --max-procs --max-chars)] },
	nice => { arg => [qw(-n --adjustment)] },
	nohup => {}, setsid => {}, setpriv => {}, unshare => {}, valgrind => {},
	stdbuf => { arg => [qw(-i -o -e)] },
	time => { arg => [qw(-f --format -o --output)] },	# the keyword and /usr/bin/time
	exec => { arg => ['-a'] },
	builtin => {},
	command => { cmdv => 1 },	# command -v NAME: NAME is wanted too
);
$prefix{$_}{arg} = { map { $_ => 1 } @{ $prefix{$_}{arg} || [] } } for keys %prefix;
my %shell = map { $_ => 1 } qw(bash sh dash);

sub rec {
	my ($kind, $name, $file, $line) = @_;
	return unless $pass == 2;
	$uses{"$kind\t$name"}{$file} //= $line;
}

sub lineat { my ($t, $p) = @_; return (substr($t, 0, $p) =~ tr/\n//); }

# Matching ends, quote-aware.  Each returns the index just past the end.
sub skip_sq { my ($t, $i) = @_; my $j = index($t, "'", $i); return $j < 0 ? length $t : $j + 1; }
sub skip_bt {
	my ($t, $i) = @_;
	while ($i < length $t) {
		my $c = substr($t, $i, 1);
		return $i + 1 if $c eq '`';
		$i += $c eq '\\' ? 2 : 1;
	}
	return $i;
}
sub skip_dq {
	my ($t, $i) = @_;
	while ($i < length $t) {
		my $c = substr($t, $i, 1);
		if ($c eq '"') { return $i + 1 }
		elsif ($c eq '\\') { $i += 2 }
		elsif (substr($t, $i, 2) eq '$(') { $i = skip_par($t, $i + 2, 1) }
		elsif ($c eq '`') { $i = skip_bt($t, $i + 1) }
		else { $i++ }
	}
	return $i;
}
# Inside $( ... ) (depth 1) or $(( ... )) (depth 2): parentheses, quotes,
# comments and here-documents.
sub skip_par {
	my ($t, $i, $depth) = @_;
	my @hd;
	my $n = length $t;
	while ($i < $n) {
		my $c = substr($t, $i, 1);
		if ($c eq '\\') { $i += 2; next }
		if ($c eq "'") { $i = skip_sq($t, $i + 1); next }
		if ($c eq '"') { $i = skip_dq($t, $i + 1); next }
		if ($c eq '`') { $i = skip_bt($t, $i + 1); next }
		if ($c eq '#' && ($i == 0 || substr($t, $i - 1, 1) =~ /\s/)) {
			my $j = index($t, "\n", $i); $i = $j < 0 ? $n : $j; next;
		}
		if (substr($t, $i, 2) eq '<<' && substr($t, $i, 3) ne '<<<') {
			pos($t) = $i + 2;
			push @hd, [$2, $1 ne ''] if $t =~ /\G(-?)\s*['"\\]?(\w+)['"]?/gc;
			$i = pos($t) // $i + 2; next;
		}
		if ($c eq "\n" && @hd) { $i = skip_heredocs($t, $i + 1, \@hd); next }
		if ($c eq '(') { $depth++ }
		elsif ($c eq ')') { return $i + 1 if --$depth == 0 }
		$i++;
	}
	return $i;
}
sub skip_brace {
	my ($t, $i) = @_;
	my $depth = 1;
	while ($i < length $t) {
		my $c = substr($t, $i, 1);
		if ($c eq '\\') { $i += 2; next }
		if ($c eq "'") { $i = skip_sq($t, $i + 1); next }
		if ($c eq '"') { $i = skip_dq($t, $i + 1); next }
		if (substr($t, $i, 2) eq '$(') { $i = skip_par($t, $i + 2, 1); next }
		if ($c eq '{') { $depth++ }
		elsif ($c eq '}') { return $i + 1 if --$depth == 0 }
		$i++;
	}
	return $i;
}
# From the start of a line past the bodies of the pending here-documents.
sub skip_heredocs {
	my ($t, $i, $hd) = @_;
	for my $h (@$hd) {
		my ($delim, $tabs) = @$h;
		while ($i < length $t) {
			my $j = index($t, "\n", $i);
			$j = length $t if $j < 0;
			my $l = substr($t, $i, $j - $i);
			$l =~ s/^\t+// if $tabs;
			$i = $j + 1;
			last if $l eq $delim;
		}
	}
	@$hd = ();
	return $i;
}

# Command substitutions inside text that is not itself run: ${...},
# [[ ... ]], (( ... )), array values.
sub subs_in {
	my ($t, $file, $line, $quotes) = @_;
	my $i = 0;
	while ($i < length $t) {
		my $c = substr($t, $i, 1);
		if ($c eq '\\') { $i += 2; next }
		if ($quotes && $c eq "'") { $i = skip_sq($t, $i + 1); next }
		if (substr($t, $i, 3) eq '$((') {
			my $j = skip_par($t, $i + 3, 2);
			subs_in(substr($t, $i + 3, $j - $i - 5), $file, $line + lineat($t, $i), $quotes);
			$i = $j; next;
		}
		if (substr($t, $i, 2) =~ /^[\$<>]\($/) {
			my $j = skip_par($t, $i + 2, 1);
			scan_sh(substr($t, $i + 2, $j - $i - 3), $file, $line + lineat($t, $i));
			$i = $j; next;
		}
		if ($c eq '`') {
			my $j = skip_bt($t, $i + 1);
			scan_sh(substr($t, $i + 1, $j - $i - 2), $file, $line + lineat($t, $i));
			$i = $j; next;
		}
		$i++;
	}
}

sub valid_name { return $_[0] =~ /^[A-Za-z0-9_][A-Za-z0-9_.+-]*$/ && $_[0] !~ /^[\d.]+$/; }

# scan_sh TEXT FILE LINE: the commands of a piece of shell text whose first
# character is on line LINE of FILE.
sub scan_sh {
	my ($t, $file, $line0) = @_;
	my $n = length $t;
	my $i = 0;
	my ($raw, $val, $wpos, $dyn) = (undef, '', 0, 0);	# the current word
	my $expect = 'cmd';
	my %p;			# state of a prefix command (env, timeout, bash -c ...)
	my $skip = 0;		# words before the command a wrapper function runs
	my $redir = 0;		# the next word is a redirection target
	my @hd;			# pending here-documents
	my @braces;		# open { } groups: function bodies
	my $pending_func;

	my $start = sub { if (!defined $raw) { $raw = ''; $val = ''; $dyn = 0; $wpos = $i } };
	my ($word_end, $cmd_word);

	$cmd_word = sub {
		my ($r, $v, $wl, $d) = @_;
		# VAR=value before the command
		if ($r =~ /^[A-Za-z_]\w*(\[[^]]*\])?\+?=/) { return }
		if ($keyword{$r}) {
			if ($r =~ /^(if|then|else|elif|do|while|until|!|coproc)$/) { return }
			if ($r eq 'time') { %p = (spec => $prefix{time}, pos => 0); $expect = 'prefix'; return }
			if ($r eq '{') {
				push @braces, 1;
				if (defined $pending_func) { push @fstack, [$pending_func, scalar @braces, \@braces]; $pending_func = undef }
				return;
			}
			if ($r eq '}') {
				pop @fstack if @fstack && $fstack[-1][2] == \@braces && $fstack[-1][1] == @braces;
				pop @braces;
				$expect = 'args'; return;
			}
			if ($r eq 'for' || $r eq 'select') { $expect = 'for_hdr'; return }
			if ($r eq 'case') { $expect = 'case_hdr'; return }
			if ($r eq 'function') { $expect = 'funcname'; return }
			if ($r eq '[[') {
				# [[ ... ]]: operands, not commands (<, >, ( and ) mean other things)
				pos($t) = $i;
				if ($t =~ /\G(.*?)\s\]\](?=[\s;&|)]|$)/sgc) {
					subs_in($1, $file, $line0 + lineat($t, $i), 1);
					$i = pos($t);
				}
			}
			$expect = 'args'; return;
		}
		# "$@" run as a command: the enclosing function is a wrapper that
		# runs its arguments after the ones it shifted away.
		if ($r eq '"$@"' || $r eq '$@' || $r eq '"${@}"') {
			if ($pass == 1 && @fstack && !defined $wrapper{ $fstack[-1][0] }) {
				$wrapper{ $fstack[-1][0] } = $fshift{ $fstack[-1][0] } // 0;
			}
			$expect = 'args'; return;
		}
		# $(CC)-like make variables: each value the makefiles give it
		if ($v =~ /^\x01(\w+)\x01$/) {
			my @vals = split ' ', $ENV{"CD_MKVAR_$1"} // '';
			rec('cmd', $_, $file, $wl) for @vals;
			$v = $vals[0] // '';
			$d = 0;
		}
		# The project's own scripts and programs ($REPO/scripts/qemu-run.sh,
		# "$T"): their "-- COMMAND" runs COMMAND (qemu-run.sh, rawtp).
		if ($d || $v =~ /[\$`\x01]/ || $v eq '') { %p = (ours => 1); $expect = 'args'; return }
		my $base = $v;
		if ($v =~ m{/}) {
			# Absolute paths of system programs are commands too (/usr/bin/time).
			if ($v !~ m{^/(usr/)?s?bin/[\w.+-]+$}) { %p = (ours => 1); $expect = 'args'; return }
			rec('cmd', $v, $file, $wl);
			($base = $v) =~ s{.*/}{};
		} elsif ($builtin{$v}) {
			if ($v eq 'eval') { $expect = 'scriptall'; return }
			if ($v eq 'trap') { $expect = 'script1'; return }
			if ($v eq 'shift') {
				$fshift{ $fstack[-1][0] }++ if @fstack;
				$expect = 'shiftn'; return;
			}
			if ($prefix{$v}) { %p = (spec => $prefix{$v}, pos => 0); $expect = 'prefix'; return }
			$expect = 'args'; return;
		} elsif ($func{$v}) {
			if (defined $wrapper{$v}) {
				$skip = $wrapper{$v};
				$expect = $skip ? 'skip' : 'cmd';
			} else {
				$expect = 'args';
			}
			return;
		} else {
			if (!valid_name($v)) { $expect = 'args'; return }
			rec('cmd', $v, $file, $wl);
		}
		if ($prefix{$base}) { %p = (spec => $prefix{$base}, pos => $prefix{$base}{pos} // 0); $expect = 'prefix' }
		elsif ($shell{$base}) { %p = (spec => {}, shell => 1, pos => 0); $expect = 'prefix' }
		else { $expect = 'args' }
	};

	$word_end = sub {
		return unless defined $raw;
		my ($r, $v, $wl, $d) = ($raw, $val, $line0 + lineat($t, $wpos), $dyn);
		$raw = undef;
		if ($redir) { $redir = 0; return }
		my $e = $expect;
		if ($e eq 'args') {
			# "bash -c SCRIPT" as arguments (qemu-run.sh -- bash -c "...")
			if ($v eq '-c' && $shell{ $p{prev} // '' }) {
				rec('cmd', $p{prev}, $file, $wl);
				$expect = 'script1';
			} elsif ($v eq '--' && $p{ours}) {
				$expect = 'cmd';
			}
			($p{prev} = $v) =~ s{.*/}{};
			return;
		}
		return if $e eq 'for_hdr';
		if ($e eq 'pattern') { $expect = 'args' if $r eq 'esac'; return }
		if ($e eq 'case_hdr') { $expect = 'pattern' if $r eq 'in'; return }
		if ($e eq 'funcname') { $func{$v} = 1; $pending_func = $v; $expect = 'cmd'; return }
		if ($e eq 'shiftn') {
			$fshift{ $fstack[-1][0] } += $v - 1 if @fstack && $v =~ /^\d+$/;
			$expect = 'args'; return;
		}
		if ($e eq 'script1') { scan_sh($v, $file, $wl); $expect = 'args'; return }
		if ($e eq 'scriptall') { scan_sh($v, $file, $wl); return }
		if ($e eq 'skip') { $expect = 'cmd' if --$skip <= 0; return }
		if ($e eq 'prefix') {
			if ($p{optarg}) { $p{optarg} = 0; return }
			if ($v =~ /^[-+]./ && !$p{dashdash}) {
				if ($v eq '--') { $p{dashdash} = 1 }
				elsif ($p{spec}{arg}{$v}) { $p{optarg} = 1 }
				elsif ($p{shell} && $v =~ /^[-+]o$/) { $p{optarg} = 1 }
				elsif ($p{shell} && $v =~ /^-[a-z]*c[a-z]*$/) { $p{c} = 1 }
				elsif ($p{spec}{cmdv} && $v =~ /^-[vV]$/) { $p{v} = 1 }
				return;
			}
			if ($p{spec}{assign} && $v =~ /^[A-Za-z_]\w*=/) { return }
			if ($p{pos} > 0) { $p{pos}--; return }
			if ($p{shell}) {
				scan_sh($v, $file, $wl) if $p{c};
				$expect = 'args'; return;
			}
			if ($p{v}) {
				rec('cmd', $v, $file, $wl) if valid_name($v) && !$builtin{$v} && !$keyword{$v} && !$func{$v};
				$expect = 'args'; return;
			}
			$expect = 'cmd';	# the command it runs
		}
		$cmd_word->($r, $v, $wl, $d);
	};

	my $sep = sub {	# ; newline | & && ||
		my ($kind) = @_;
		$word_end->();
		return if $expect eq 'pattern';
		$expect = $kind eq ';;' ? 'pattern' : 'cmd';
		$skip = 0; %p = (); $redir = 0;
	};

	while ($i < $n) {
		my $c = substr($t, $i, 1);
		my $c2 = substr($t, $i, 2);
		if ($c eq "\n") {
			$i++;
			$i = skip_heredocs($t, $i, \@hd) if @hd;
			$sep->("\n");
		} elsif ($c eq ' ' || $c eq "\t") {
			$i++; $word_end->();
		} elsif ($c eq '#' && !defined $raw) {
			my $j = index($t, "\n", $i); $i = $j < 0 ? $n : $j;
		} elsif ($c eq '\\') {
			if (substr($t, $i + 1, 1) eq "\n") { $i += 2; next }
			$start->(); $raw .= $c2; $val .= substr($t, $i + 1, 1); $i += 2;
		} elsif ($c eq "'") {
			$start->();
			my $j = skip_sq($t, $i + 1);
			$raw .= substr($t, $i, $j - $i); $val .= substr($t, $i + 1, $j - $i - 2);
			$i = $j;
		} elsif ($c eq '"') {
			# Only the substitutions of a double-quoted string run; its text
			# is kept as the word's value (for bash -c "...").
			$start->();
			my $j = skip_dq($t, $i + 1);
			my $s = substr($t, $i + 1, $j - $i - 2);
			subs_in($s, $file, $line0 + lineat($t, $i + 1), 0);
			(my $u = $s) =~ s/\\([\$`"\\\n])/$1 eq "\n" ? '' : $1/ge;
			$raw .= substr($t, $i, $j - $i); $val .= $u;
			$i = $j;
		} elsif ($c eq '`' || $c2 eq '$(' || $c eq '$' && substr($t, $i + 1, 1) eq '{') {
			$start->();
			my $j = $c eq '`' ? skip_bt($t, $i + 1)
			      : substr($t, $i, 3) eq '$((' ? skip_par($t, $i + 3, 2)
			      : $c2 eq '$(' ? skip_par($t, $i + 2, 1) : skip_brace($t, $i + 2);
			subs_in(substr($t, $i, $j - $i), $file, $line0 + lineat($t, $i), 1);
			$raw .= substr($t, $i, $j - $i); $val .= substr($t, $i, $j - $i); $dyn = 1;
			$i = $j;
		} elsif ($c eq '$') {
			$start->(); $raw .= $c; $val .= $c; $dyn = 1; $i++;
		} elsif ($c eq ';') {
			if ($c2 eq ';;' || $c2 eq ';&') { $i += 2; $i++ if substr($t, $i, 1) eq '&'; $sep->(';;') }
			else { $i++; $sep->(';') }
		} elsif ($c eq '&' && substr($t, $i + 1, 1) ne '>') {
			$i += $c2 eq '&&' ? 2 : 1; $sep->('&');
		} elsif ($c eq '|') {
			if ($expect eq 'pattern') { $word_end->(); $i++; next }
			$i += ($c2 eq '||' || $c2 eq '|&') ? 2 : 1; $sep->('|');
		} elsif ($c eq '<' || $c eq '>' || $c2 eq '&>') {
			if (defined $raw && $raw =~ /^\d+$/) { $raw = undef } else { $word_end->() }
			if ($c2 eq '<(' || $c2 eq '>(') {
				my $j = skip_par($t, $i + 2, 1);
				scan_sh(substr($t, $i + 2, $j - $i - 3), $file, $line0 + lineat($t, $i));
				if ($redir) { $redir = 0 } else { $start->(); $raw = $val = '$PROC'; $dyn = 1; $word_end->() }
				$i = $j;
			} elsif (substr($t, $i, 3) eq '<<<') {
				$i += 3; $redir = 1;
			} elsif ($c2 eq '<<') {
				pos($t) = $i + 2;
				if ($t =~ /\G(-?)[ \t]*(?:'([^']*)'|"([^"]*)"|\\?([^\s;&|<>()]+))/gc) {
					push @hd, [$2 // $3 // $4, $1 ne ''];
					$i = pos($t);
				} else { $i += 2 }
			} else {
				$i += $c2 eq '&>' ? 2 : 1;
				$i++ if substr($t, $i, 1) =~ /[>&|]/ && !($c eq '<' && substr($t, $i, 1) eq '|');
				$redir = 1;
			}
		} elsif ($c eq '(') {
			if (defined $raw && $raw =~ /^[A-Za-z_]\w*(\[[^]]*\])?\+?=$/) {
				# an array value: words, not commands
				my $j = skip_par($t, $i + 1, 1);
				subs_in(substr($t, $i + 1, $j - $i - 2), $file, $line0 + lineat($t, $i), 1);
				$raw .= '()'; $i = $j;
			} elsif (substr($t, $i) =~ /^\(\s*\)/) {
				# NAME() { ...: a function definition
				if (defined $raw) { $func{$val} = 1; $pending_func = $val; $raw = undef }
				$i += length($&); $expect = 'cmd';
			} elsif ($expect eq 'pattern') {
				$i++;
			} elsif (!defined $raw && $c2 eq '((') {
				# (( arithmetic )), also for (( ...; ...; ... ))
				my $j = skip_par($t, $i + 2, 2);
				subs_in(substr($t, $i, $j - $i), $file, $line0 + lineat($t, $i), 1);
				$i = $j; $expect = 'args' if $expect eq 'cmd';
			} else {
				$word_end->(); $i++; $expect = 'cmd';	# a subshell
			}
		} elsif ($c eq ')') {
			$word_end->(); $i++;
			$expect = $expect eq 'pattern' ? 'cmd' : 'args';
		} else {
			$start->(); $raw .= $c; $val .= $c; $i++;
		}
	}
	$word_end->();
}

# ---- make --------------------------------------------------------------------
my (%mkvals);
# Make's own defaults: "CC ?= gcc" keeps make's CC (cc).
my %mkdefault = (CC => 'cc', CXX => 'g++', MAKE => 'make', AR => 'ar', AS => 'as', LD => 'ld');

sub read_joined {	# lines with their continuations joined: [line number, text]
	my ($file) = @_;
	open my $fh, '<', $file or die "$file: $!";
	my (@out, $acc, $start);
	my $ln = 0;
	while (my $l = <$fh>) {
		$ln++;
		chomp $l;
		if (defined $acc) { $acc .= "\n" . $l } else { ($acc, $start) = ($l, $ln) }
		next if $l =~ /\\$/;
		push @out, [$start, $acc];
		$acc = undef;
	}
	push @out, [$start, $acc] if defined $acc;
	return @out;
}

# Make references out of a line: $(shell X) becomes $(X), a variable that
# names a command becomes a marker, anything else an opaque $MK.
sub mkexpand {
	my ($s) = @_;
	my $o = '';
	my $i = 0;
	while ($i < length $s) {
		my $c = substr($s, $i, 1);
		if ($c ne '$') { $o .= $c; $i++; next }
		my $d = substr($s, $i + 1, 1);
		if ($d eq '$') { $o .= '$'; $i += 2; next }
		if ($d eq '(' || $d eq '{') {
			my $close = $d eq '(' ? ')' : '}';
			my ($depth, $j) = (1, $i + 2);
			while ($j < length $s && $depth) {
				my $e = substr($s, $j, 1);
				$depth++ if $e eq $d;
				$depth-- if $e eq $close;
				$j++;
			}
			my $in = substr($s, $i + 2, $j - $i - 3);
			if ($in =~ /^shell\s+(.*)$/s) { $o .= '$(' . mkexpand($1) . ')' }
			elsif ($in =~ /^\w+$/ && $mkvals{$in}) { $o .= "\x01$in\x01" }
			else { $o .= '$MK' }
			$i = $j; next;
		}
		$o .= '$MK'; $i += 2;	# $@, $<, $^ ...
	}
	return $o;
}

sub scan_make {
	my ($file) = @_;
	for my $ln (read_joined($file)) {
		my ($line, $l) = @$ln;
		my $flat = $l;
		$flat =~ s/\\\n/ /g;
		while ($flat =~ /(?:^|\s)-l([\w+.-]+)/g) { rec('lib', $1, $file, $line) }
		if ($l =~ s/^\t[\s@+-]*//) {
			scan_sh(mkexpand($l), $file, $line);	# a recipe line
		} else {
			subs_in(mkexpand($l), $file, $line, 0);	# $(shell ...) elsewhere
		}
	}
}

sub make_vars {	# NAME = VALUE assignments whose value is one command word
	my %vals;
	for my $file (@_) {
		for my $ln (read_joined($file)) {
			my $l = $ln->[1];
			next unless $l =~ /^\s*(?:override\s+)?(\w+)\s*(\?=|:=|::=|=)\s*(\S+)\s*$/;
			my ($name, $op, $v) = ($1, $2, $3);
			next if $op eq '?=' && $mkdefault{$name};
			$vals{$name}{$v} = 1 if valid_name($v);
		}
	}
	$vals{$_}{ $mkdefault{$_} } = 1 for keys %mkdefault;
	%mkvals = map { $_ => join(' ', sort keys %{ $vals{$_} }) } keys %vals;
	$ENV{"CD_MKVAR_$_"} = $mkvals{$_} for keys %mkvals;
}

# ---- C -----------------------------------------------------------------------
sub cstr {	# a run of C string literals -> its text, printf conversions as $ARG
	my ($lits) = @_;
	my $s = '';
	$s .= $1 while $lits =~ /"((?:\\.|[^"\\])*)"/g;
	$s =~ s/%%/\x02/g;
	$s =~ s/%[-+ #0]*(\d+|\*)?(\.(\d+|\*))?(hh|h|ll|l|z|j|t|L)?[diouxXsScpfgeEaA]/\$ARG/g;
	$s =~ s/\x02/%/g;
	$s =~ s/\\([nt"\\])/$1 eq 'n' ? "\n" : $1 eq 't' ? "\t" : $1/ge;
	return $s;
}

sub scan_c {
	my ($file) = @_;
	open my $fh, '<', $file or die "$file: $!";
	local $/;
	my $t = <$fh>;
	# Comments out (newlines kept, for line numbers), strings kept.
	$t =~ s{("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|/\*(.*?)\*/|//[^\n]*}
	       {defined $1 ? $1 : defined $2 ? "\n" x ($2 =~ tr/\n//) : ''}gse;
	my $lang = $file =~ /\.(cc|cpp|cxx|hpp)$/ ? 'c++' : 'c';
	while ($t =~ /^[ \t]*#[ \t]*include[ \t]*<([^>]+)>/mg) {
		rec('hdr', $1, $file, 1 + lineat($t, $-[0]));
		$hlang{$1}{$lang} = 1;
	}
	my $lits = qr/(?:"(?:\\.|[^"\\\n])*"\s*)+/;
	while ($t =~ /\b(system|popen|exec[lv]p?e?|execvpe)\s*\(\s*($lits|[A-Za-z_]\w*)/g) {
		my ($fn, $arg, $at) = ($1, $2, $-[0]);
		my $line = 1 + lineat($t, $at);
		if ($arg =~ /^"/) {
			my $s = cstr($arg);
			if ($fn eq 'system' || $fn eq 'popen') { scan_sh($s, $file, $line) }
			elsif ($fn =~ /p/ && valid_name($s) || $s =~ m{^/(usr/)?s?bin/[\w.+-]+$}) { rec('cmd', $s, $file, $line) }
		} elsif ($fn eq 'system' || $fn eq 'popen') {
			# The buffer's last [v]s[n]printf before the call.
			my $before = substr($t, 0, $at);
			my ($fmt, $fat);
			while ($before =~ /\bv?s n?printf\s*\(\s*\Q$arg\E\s*,(?:[^,"]*,)?\s*($lits)/gx) {
				($fmt, $fat) = ($1, $-[1]);
			}
			scan_sh(cstr($fmt), $file, 1 + lineat($t, $fat)) if defined $fmt;
		}
	}
}

# ---- main --------------------------------------------------------------------
my (@sh, @mk, @c);
for (@ARGV) {
	my ($k, $f) = split /:/, $_, 2;
	push @{ $k eq 'sh' ? \@sh : $k eq 'mk' ? \@mk : \@c }, $f;
}
make_vars(@mk);
sub slurp { my ($f) = @_; open my $fh, '<', $f or die "$f: $!"; local $/; return scalar <$fh>; }
# Pass 1 finds the shell functions and the wrappers among them (a wrapper
# may be defined in a file read after its callers); pass 2 records.
for my $p (1, 2) {
	$pass = $p;
	%fshift = (); @fstack = ();
	scan_sh(slurp($_), $_, 1) for @sh;
	scan_make($_) for @mk;
	scan_c($_) for @c;
}
for my $k (sort keys %uses) {
	my ($kind, $name) = split /\t/, $k;
	my $u = $uses{$k};
	my $where = join ', ', map { "$_:$u->{$_}" } sort keys %$u;
	my $lang = $kind eq 'hdr' ? "\t" . join(',', sort keys %{ $hlang{$name} }) : '';
	print "$kind\t$name\t$where$lang\n";
}
