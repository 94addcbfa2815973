"""`kb scan` and `kb explain`: recognise known problems in a user's model or log.

    scan.py           kb scan MODEL: trigger patterns (kb.pattern) found in a model
    explain.py        kb explain [LOG]: log signatures found in a log, ranked
    modelfile.py      read a model file (ONNX, or a torch.export program) or say what is wrong with it
    torch_program.py  child side: a torch.export program to ONNX (imports torch, so never in the parent)
    paths.py          the first check of any input file: it exists, is a file, can be read
    logfile.py        read a log line by line, bounded, cleaned of colours and line-ending noise
    noise.py          a pasted line's noise (colours, timestamps, paths, addresses): one definition, also
                      written out as the site search box's rules
    status.py         an entry's status on the engine versions asked about, from records and expected.yaml
    links.py          addresses of entry pages and of the site's search
    codes.py          exit codes, in one place
"""
