from nsprof.cli import main

main()
