from tf1clip.cli import run_main

run_main()
