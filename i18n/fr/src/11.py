FR = {}
FR["title"] = """# Chapitre 11 — Les mêmes bornes dans votre framework

**Durée :** environ 30 minutes.

**Prérequis :** les chapitres 1 à 10, surtout le chapitre 2 (choisir l'environnement d'exécution) et
le chapitre 8 (le middleware). Les frameworks sont installés par `make lab` (l'extra `adapters` de
labkit) ; aucun autre chapitre ne les importe.

Jusqu'ici, tout s'est exécuté dans les deux boucles propres à labkit. Or la thèse de ce cours est
que c'est l'*hôte* qui possède les règles d'arrêt, quel que soit le code qui fait tourner la boucle.
Ce chapitre le vérifie : les mêmes scénarios, plus un des vôtres, s'exécutent dans les boucles
propres à quatre frameworks d'agents — Microsoft Agent Framework (le cours français dont ce
workbook est le portage utilisait son édition C#), pydantic-ai, l'OpenAI Agents SDK et LangGraph —
avec le périmètre d'exécution de labkit autour de chacune.

**Ce que vous saurez faire**

- exécuter un scénario dans la boucle propre à un framework avec `labkit.run(..., agent=...)` ;
- dire ce que labkit confie au framework : des outils gardés, un modèle qui compte ses appels, un
  plafond de boucle fixé un cran au-dessus du budget d'appels modèle, des appels exécutés l'un après
  l'autre ;
- comparer les limites propres à un framework avec les bornes de labkit, et dire en quoi elles
  diffèrent ;
- déclarer votre propre scénario avec `labkit.scenario` et l'exécuter dans chaque boucle ;
- expliquer pourquoi les appels bizarres d'un modèle (un flottant à la place d'un entier, un outil
  inconnu, des arguments vides) reçoivent la même réponse dans chaque boucle, et ce que serait une
  *divergence déclarée*."""
FR["loops"] = """## Un périmètre, six boucles

`labkit.run(scenario, agent=...)` accepte, outre `"simple"` et `"harness"`, quatre autres noms.
Chacun exécute la boucle **propre** à un framework, sans la modifier, dans le périmètre
d'exécution de cette exécution :

- les outils gardés de l'exécution deviennent les outils de type fonction du framework : chaque
  appel passe donc par la garde de labkit, au niveau du corps d'outil ;
- le client de comptage devient le modèle (ou le client de chat) du framework : chaque appel modèle
  est donc compté avant que le transport ne le voie ;
- le plafond de la boucle propre au framework est fixé au budget d'appels modèle + 1, pour que le
  compteur de labkit arrête l'exécution en premier ;
- les appels d'une même réponse s'exécutent l'un après l'autre : chaque framework est configuré
  ainsi (trois des quatre frameworks les lancent tous en même temps par défaut ; pour LangGraph, le
  nœud d'outils est celui de labkit, qui exécute un appel après l'autre)."""
FR["predict-intro"] = """## Une réponse, trois appels, dans six boucles

Les vrais modèles demandent souvent plusieurs outils dans une même réponse, et trois des quatre
frameworks lancent ces appels tous en même temps par défaut. Prenons un modèle dont la première
réponse demande à la fois `read_ticket(1)`, `read_ticket(2)` et `read_ticket(3)`, et dont la
seconde dit "Done.". L'hôte accorde les deux capacités et autorise **2** tentatives d'outil ; les
autres limites gardent leur valeur par défaut. Exécutez-le dans les six boucles. Prédisez comment
se termine chaque exécution et combien d'événements `ToolCall` elle enregistre."""
FR["same-guess#hint"] = """Quelle que soit la boucle qui traite la réponse, chacun de ses appels atteint la garde de labkit au niveau du corps d'outil, et la garde réserve une tentative sous son verrou avant que le moindre corps ne démarre : combien des trois peut-elle admettre ?"""
FR["same-read"] = """Six boucles, une seule issue : dans chacune, la garde a admis deux tentatives et refusé la troisième
avant son corps, et "Done." n'a jamais été demandé. Les événements sont eux aussi identiques, dans
le même ordre, et il en va de même en streaming (`stream=True`) : `tests/test_adapters.py` vérifie
les huit scénarios dans chaque boucle, des deux façons, et `tests/test_parity_generated.py` des
milliers de scripts générés."""
FR["alone-intro"] = """## Ce que font seules les limites propres à un framework

Retirons maintenant labkit. Ci-dessous, l'OpenAI Agents SDK tourne seul avec `max_turns=6`, le
budget d'appels modèle de labkit ; un modèle scripté demande trois nouveaux tickets à chaque
réponse, et le corps d'outil compte lui-même ses passages. Prédisez combien de corps s'exécutent."""
FR["alone-guess#hint"] = """max_turns borne les appels modèle et rien d'autre ; comptez les appels que demande chaque réponse."""
FR["alone-read"] = """Dix-huit corps, là où le budget d'outils par défaut de labkit en admet quatre, et l'exécution se
termine par une exception, pas par un statut.
Les trois autres frameworks ont leurs propres limites, et ce ne sont pas non plus celles de labkit
(mesurées dans `tests/test_adapters_native.py`) :

| framework seul | ce que font ses limites |
|---|---|
| Microsoft Agent Framework | après `max_iterations`, il fait **un appel modèle de plus**, outils désactivés ; `max_function_calls` est vérifié après un lot entier, si bien qu'un lot peut le dépasser ; les deux se terminent par du texte ordinaire |
| pydantic-ai | `tool_calls_limit` refuse en bloc un lot qui le dépasserait (3 corps pour une limite de 4) et lève `UsageLimitExceeded` |
| OpenAI Agents SDK | aucune limite d'outils ; `max_turns` lève `MaxTurnsExceeded` une fois que tous les corps de tous les tours se sont exécutés |
| LangGraph (son agent ReAct préconstruit) | aucune limite d'appels modèle ni d'outils, seulement `recursion_limit` sur les étapes du graphe : à 13, il laisse passer 7 appels modèle et 18 corps, puis lève `GraphRecursionError` |

Avec le périmètre d'exécution de labkit autour d'eux, le même modèle s'arrête à exactement quatre
corps dans chacun :"""
FR["own-intro"] = """## Votre scénario, dans chaque boucle

`labkit.scenario` déclare votre propre scénario, du côté de l'hôte — les outils (nom, capacité,
corps typé dont le premier paramètre est l'état de l'hôte), l'état de l'hôte, ce qui est accordé,
les limites, une condition de fin portant sur l'état de l'hôte — ainsi qu'un modèle scripté. Une
étape peut porter du texte **et** des appels d'outils, comme les vrais modèles en envoient souvent :
`Reply(text, calls)`. Les huit scénarios du cours sont déclarés avec cette même fonction.

Ici, un modèle range deux livres dans une seule réponse, avec une phrase de texte à côté des deux
appels, puis dit "Done.". La condition de fin : deux livres sur l'étagère. Prédisez comment se
termine l'exécution, et combien d'événements `ToolCall` elle enregistre, dans chaque boucle."""
FR["own-guess#hint"] = """Une réponse qui porte du texte *et* des appels met-elle fin à la boucle, ou ses appels s'exécutent-ils d'abord ? La condition hôte est lue quand la boucle se termine d'elle-même."""
FR["own-read"] = """Le texte placé à côté des appels n'a pas mis fin à la boucle : dans aucune des six boucles, une
réponse qui demande des appels n'est une réponse finale. Les deux appels se sont exécutés, le modèle
a été rappelé, "Done." a terminé la boucle d'elle-même, et la condition était vraie : `Completed`,
avec "Done." pour texte. Remplacez la seconde étape par `Call("shelve", {"title": "Dune"})` et
chaque boucle rapporte `RepeatedCall`, bien que la condition soit alors vraie : un arrêt est un
arrêt.

Mettez la déclaration dans un fichier, et la console l'exécute aussi, dans n'importe quelle boucle :
`labkit run library.py:library --runtime pydantic-ai`. Chaque adaptateur indique, dans l'en-tête de
l'exécution, ce qu'il a réglé dans son framework :"""
FR["odd-intro"] = """## Un modèle bizarre, la même réponse

Les vrais modèles envoient des appels bizarres : un entier écrit `42.0`, un outil qui n'existe pas,
pas d'arguments du tout (`""`). Chaque framework, seul, a sa propre réponse à ces cas, et ce n'est
pas celle de labkit : Microsoft Agent Framework valide lui-même les arguments avant la liaison typée
de labkit (et refuse `42.0`), pydantic-ai et l'Agents SDK lèvent leur propre exception pour un outil
inconnu, et un texte d'arguments vide était lu en silence comme `{}`. Chaque adaptateur remet donc à
son framework chaque appel dans une *enveloppe* — un seul argument qui contient le nom de l'outil et
le texte du modèle tel qu'il a été envoyé, sous un schéma qui accepte n'importe quoi — et l'outil
transmet le texte brut à la garde de labkit. Un appel que la boucle de labkit n'exécuterait pas (un
outil inconnu, des identifiants d'appel répétés dans une même réponse) est dirigé vers un outil
réservé du framework, qui répond avec le résultat d'erreur de labkit lui-même.

Le modèle ci-dessous lit le ticket `42.0` et demande un outil qui n'existe pas, puis lit sans
arguments, puis lit le ticket `42`. Prédisez comment l'exécution se termine, dans chaque boucle."""
FR["odd-guess#hint"] = """La liaison typée passe avant la garde, et une signature est calculée sur les arguments liés (chapitre 5) : que devient 42.0 une fois lié à un int ? Qu'est-ce qui atteint la garde venant d'un outil inconnu, ou d'arguments qui ne sont pas du JSON ?"""
FR["odd-read"] = """Le modèle a lu les mêmes résultats dans chaque boucle, mot pour mot : `42.0` a été lié à `42` et
s'est exécuté, l'outil inconnu et les arguments vides ont chacun reçu un résultat `error:`, et `42`
redonnait la même signature. La transcription de l'exécution garde un résultat par identifiant
d'appel, dans chaque boucle :"""
FR["alone-odd-intro"] = """Sans le périmètre d'exécution de labkit, le framework répond à sa manière. Voici pydantic-ai seul,
avec un modèle qui demande l'outil qui n'existe pas :"""
FR["declared"] = """Une exception qui sort de l'exécution, après deux appels modèle : c'est la réponse du framework, pas
un statut. Dans le périmètre d'exécution de labkit, ce même appel donne un résultat `error:` et
l'exécution continue, comme plus haut.

Une différence que labkit ne pourrait pas combler serait **déclarée**, avec sa raison, dans un
tableau unique des comportements des frameworks : `labkit/adapters/divergences.py`. Un test généré
(`tests/test_parity_generated.py`) écrit des scripts avec des appels bizarres comme ceux-ci — JSON
mal formé, identifiants d'appel répétés, réponses vides, nombres en flottant, en notation
exponentielle ou en chaîne, corps qui échouent, limites à partir de 0 —, exécute chacun dans chaque
boucle, en mode normal et en streaming, et échoue sur toute différence que le tableau ne déclare
pas ; `docs/adapters.md` affiche le tableau. Avec les adaptateurs tels qu'ils sont, il est vide :"""
FR["wrap"] = """
## Envelopper votre propre agent

Un adaptateur est court ; `labkit/adapters/pydanticai.py` est le plus court de tous. Pour placer le
périmètre d'exécution autour d'un agent à vous, donnez-lui les quatre mêmes choses :

1. **les outils** : créez chacun avec `scope.tool(name, capability, body)` et enregistrez l'outil
   gardé (ou une fonction qui appelle `await tool.ainvoke(arguments)`) comme outil du framework ;
2. **le modèle** : faites passer chaque appel modèle par `labkit.CountingClient(transport, scope)` ;
3. **le plafond de boucle** : la limite propre au framework, fixée à `scope.limits.model_calls + 1` ;
4. **les arrêts** : laissez `labkit.RunHalted` sortir de la boucle du framework, sans jamais le
   laisser devenir un message que lit le modèle ; activez le mode séquentiel du framework pour les
   appels d'outils.

`labkit.run_agent(agent, prompt, is_complete=...)` vous donne alors le `RunOutcome` de labkit. Voir
`docs/adapters.md`.

## Auto-vérification"""
FR["explore"] = """## Explorer

Le panneau exécute les boucles propres à labkit ; changez les limites de `changing`, puis exécutez
les mêmes limites dans un framework :
`labkit.run("changing", agent="maf", limits=labkit.Limits(tool_calls=2))`."""
FR["questions"] = """## Questions

**1.** Pourquoi le plafond de la boucle du framework doit-il être *au-dessus* du budget d'appels
modèle de labkit plutôt qu'égal à lui ?

<details><summary>Réponse</summary>

Pour que le compteur de labkit arrête toujours l'exécution en premier, et que l'arrêt porte le nom
que lui donne labkit. Avec un plafond égal au budget, c'est la limite propre au framework qui
terminerait certaines exécutions à la place : l'OpenAI Agents SDK avec son exception
`MaxTurnsExceeded`, Microsoft Agent Framework avec l'appel modèle final supplémentaire qu'il fait
après sa dernière itération. Avec un plafond à la limite d'appels modèle + 1, l'appel qui dépasserait le budget
atteint d'abord le client de comptage et y est refusé : `ModelBudget`, un statut et un code de
sortie, jamais une exception du framework.

</details>

**2.** Microsoft Agent Framework transforme toute exception levée par un outil en un message que lit
le modèle. Qu'arriverait-il à `repeat` si l'adaptateur le laissait faire cela avec un arrêt ?

<details><summary>Réponse</summary>

L'arrêt deviendrait une ligne `error:` que lit le modèle, et la boucle du framework continuerait
comme si un appel avait simplement échoué : elle rappellerait le modèle. Le périmètre d'exécution
s'est arrêté, donc le client de comptage refuserait cet appel et la garde refuserait tout autre
appel d'outil (aucun corps ne s'exécute après un arrêt) ; mais l'arrêt ne serait alors constaté
qu'à l'appel modèle suivant, et non au niveau du corps d'outil, et le modèle aurait été invité à
réessayer. C'est pourquoi le middleware de fonction de l'adaptateur transforme un arrêt en
`MiddlewareFailure` de MAF, que MAF laisse sortir de sa boucle.

</details>

**3.** Parmi les quatre frameworks, lesquels mettraient en défaut, avec leurs réglages par défaut, la
garantie « après un arrêt, aucun corps ne démarre » ?

<details><summary>Réponse</summary>

Tous les quatre, tels qu'ils sont livrés : chacun exécute par défaut les appels d'une même réponse
en même temps (`allow_concurrent_invocation` de MAF, l'exécution parallèle des outils de
pydantic-ai, l'Agents SDK qui lance tous les appels ensemble, le `ToolNode` préconstruit de
LangGraph). La garde refuse toujours chaque appel qui l'atteint après un arrêt, mais des appels
lancés au même instant font la course avec celui qui provoque l'arrêt : quels corps se sont exécutés
dépend alors de l'ordonnancement, et un framework peut abandonner le reste d'un lot sans donner de
résultat pour chaque identifiant d'appel. Les adaptateurs font passer chaque framework en mode
séquentiel, de la même façon que les boucles de labkit exécutent les appels (chapitre 8).

</details>"""
FR["key-points"] = """## Points clés

- `labkit.run(scenario, agent="maf" | "pydantic-ai" | "openai-agents" | "langgraph")` exécute la
  boucle propre à ce framework dans le périmètre d'exécution de labkit ; la console prend
  `--runtime`.
- Les issues, les événements et les corps exécutés sont les mêmes dans les six boucles, y compris
  pour les appels bizarres : la liaison typée de labkit est la seule vérification des arguments, et
  les refus propres à un framework n'atteignent jamais l'exécution.
- Les limites propres aux frameworks ne sont pas ces bornes : un appel modèle final supplémentaire,
  un lot qui dépasse la limite ou qui est refusé en bloc, aucune limite d'outils du tout, des
  exceptions au lieu de statuts.
- `labkit.scenario` déclare votre propre scénario ; `Reply` donne à une étape du texte et des appels
  à la fois.

**Pour aller plus loin**

- Ajoutez à `library` une troisième étape, `Call("shelve", {"title": "Dune"})`, avant `"Done."`, et
  exécutez-le dans chaque boucle, d'abord avec les limites par défaut, puis avec
  `limits={"repetitions": 2}`.
- Lisez `labkit/adapters/maf.py` : trouvez l'endroit où un arrêt devient `MiddlewareFailure`.
- `tests/test_adapters.py` est la matrice de parité, `tests/test_parity_generated.py` la matrice
  générée (`make fuzz` exécute 2 000 scripts) ; `docs/adapters.md` est la référence, avec son tableau
  des divergences déclarées.

### Le cours, en résumé

C'était le dernier chapitre. Vous savez maintenant placer une boucle sous le contrôle de l'hôte et le
démontrer : accorder des capacités, fixer les quatre limites, prédire à partir d'un script quelle
règle arrête une exécution et ce qu'elle a coûté, lire les événements, les compteurs et les spans,
écrire et tester votre propre garde, et garder les mêmes bornes autour de la boucle d'un framework.
Deux choses restent hors du périmètre d'une exécution, et vous les avez vues toutes les deux : un
corps d'outil qui ignore son annulation, et une écriture rejouée après un redémarrage, qui demande
une décision durable.

Et ensuite ? Placez `labkit.run(..., agent=...)` autour d'un agent à vous, avec un scénario déclaré
par `labkit.scenario` ; exécutez les scénarios avec un modèle local (`labkit run complete --live`,
décrit dans le README) ; et relisez le vérificateur du projet final le jour où vous écrirez une garde
pour de vrai."""
FR["instructor"] = """## Notes pour l'enseignant

<details><summary>Notes pour l'enseignant</summary>

**Idées reçues fréquentes**

- « Le `max_turns` (ou `max_iterations`) du framework, c'est le budget d'appels modèle. » Il compte
  des tours de boucle, pas des tentatives de transport, et il termine l'exécution par une exception
  ou par un appel final supplémentaire ; le compteur de labkit est volontairement un cran en dessous.
- « La limite d'outils du framework compte les tentatives. » Le `max_function_calls` de MAF peut être
  dépassé par un lot entier ; pydantic-ai refuse un lot entier d'un coup ; l'Agents SDK n'en a pas.
  Seule la garde, au niveau du corps, compte chaque tentative avant qu'elle ne s'exécute.
- « L'adaptateur modifie le framework. » Il se contente de le configurer et de lui remettre des
  outils gardés et un client de modèle qui compte ses appels : la boucle propre au framework
  s'exécute sans modification.

**Pistes de discussion**

- Dans votre propre stack, où se placerait le client de comptage, et y a-t-il, entre lui et le
  réseau, quelque chose qui puisse réessayer sans qu'on le voie (chapitre 6) ?
- Laquelle des exceptions de votre framework un apprenant prendrait-il pour une raison d'arrêt ?

</details>"""
