# bash completion for gpusort (installed as share/bash-completion/completions/gpusort)

_gpusort() {
    local cur prev words cword
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local commands="sort check scan reduce select partition unique rle reduce-by-key gen bench devices help"
    local types="u32 i32 f32 u64 i64 f64 uint32 int32 float32 uint64 int64 float64"
    # sort, check and gen take keys and values of every form
    local field_types="$types u8 i8 u16 i16 f16 bf16 u16be i16be u32be i32be f32be u64be i64be f64be uint8 int8 uint16 int16 float16 bytes:"
    local common="--device --timeout --mem-limit --temp-dir --progress --no-progress --json --quiet --verbose --help --version"
    local layout="--keys --values --record-size --key-offset --key"
    # select, partition, unique, rle and reduce-by-key
    local compact="$layout --output --force --sync $common"

    # the command: the first word after gpusort that names one (sort when none does)
    local command=sort i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case " $commands " in *" ${COMP_WORDS[i]} "*) command=${COMP_WORDS[i]}; break ;; esac
    done

    case $prev in
        --keys|--values)
            case $command in
                sort|check|gen) COMPREPLY=($(compgen -W "$field_types" -- "$cur")) ;;
                *) COMPREPLY=($(compgen -W "$types" -- "$cur")) ;;
            esac
            return ;;
        --acc) COMPREPLY=($(compgen -W "$types" -- "$cur")); return ;;
        --index-type|--count-type) COMPREPLY=($(compgen -W "u32 u64" -- "$cur")); return ;;
        --op) COMPREPLY=($(compgen -W "sum min max" -- "$cur")); return ;;
        --algo)
            case $command in
                scan) COMPREPLY=($(compgen -W "lookback reduce-then-scan" -- "$cur")) ;;
                *) COMPREPLY=($(compgen -W "auto onesweep reduce-then-scan bitonic" -- "$cur")) ;;
            esac
            return ;;
        --dist) COMPREPLY=($(compgen -W "uniform sorted reversed equal few entropy lowbits highbits special" -- "$cur")); return ;;
        --temp-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
        -o|--output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --device|--timeout|--mem-limit|--record-size|--key-offset|--key|--bits|--seed|--sizes|--reps|-n|--where) return ;;
    esac

    local options
    case $command in
        sort) options="$layout --descending --bits --argsort --index-type --unique --rle --count-type --algo --output --force --sync --verify $common" ;;
        check) options="$layout --descending --bits $common" ;;
        scan) options="--keys --op --inclusive --exclusive --acc --algo --deterministic --output --force --sync $common" ;;
        reduce) options="--keys --op --acc --deterministic $common" ;;
        select|partition) options="--where $compact" ;;
        unique) options="$compact" ;;
        rle) options="--count-type $compact" ;;
        reduce-by-key) options="--op --acc $compact" ;;
        gen) options="$layout -n --dist --seed --force --sync $common" ;;
        bench) options="--keys --values --sizes --reps --algo --dist --scan-algos --compact $common" ;;
        devices) options="$common" ;;
        help) COMPREPLY=($(compgen -W "$commands" -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
    elif ((COMP_CWORD == 1)); then
        COMPREPLY=($(compgen -W "$commands" -- "$cur") $(compgen -f -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o filenames -F _gpusort gpusort
